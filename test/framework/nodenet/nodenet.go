// Package nodenet is the network between a test's kube-apiserver and its simulated nodes. The
// apiserver reaches a kubelet (node proxy, Node Log Query, logs, exec) at the Node's InternalIP
// and port 10250, addresses that exist only in the simulation; as with Konnectivity, it sends that
// traffic through an HTTP CONNECT proxy named in its egress selector configuration, and the proxy
// hands each connection to the listener the simulated kubelet of that address opened on loopback.
package nodenet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Network is a running proxy with its routes.
type Network struct {
	sock string
	ln   net.Listener
	wg   sync.WaitGroup

	mu     sync.Mutex
	routes map[string]string // simulated host:port -> loopback host:port
	open   map[net.Conn]bool // connections being served (Close ends them: the apiserver keeps idle ones)
}

// Start serves the proxy on a Unix socket in dir (the apiserver's egress transport).
func Start(dir string) (*Network, error) {
	sock := filepath.Join(dir, "nodes.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("node network: %w", err)
	}
	n := &Network{sock: sock, ln: ln, routes: map[string]string{}, open: map[net.Conn]bool{}}
	n.wg.Add(1)
	go n.accept()
	return n, nil
}

// EgressSelectorConfiguration is the apiserver's --egress-selector-config-file: traffic to the
// cluster (nodes, pods, services) goes through the proxy.
func (n *Network) EgressSelectorConfiguration() string { return EgressSelection(n.sock) }

// EgressSelection is an egress selector configuration whose "cluster" network (nodes, pods,
// services) goes through the HTTP CONNECT proxy on the Unix socket.
func EgressSelection(socket string) string {
	return fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, socket)
}

// Listen opens a loopback listener that receives the connections made to address (host:port of
// the simulation); closing it removes the route.
func (n *Network) Listen(address string) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, taken := n.routes[address]; taken {
		_ = ln.Close()
		return nil, fmt.Errorf("node network: %s is in use", address)
	}
	n.routes[address] = ln.Addr().String()
	return &routed{Listener: ln, close: func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.routes[address] == ln.Addr().String() {
			delete(n.routes, address)
		}
	}}, nil
}

type routed struct {
	net.Listener
	once  sync.Once
	close func()
}

func (r *routed) Close() error {
	r.once.Do(r.close)
	return r.Listener.Close()
}

// Close stops the proxy, ends its connections and waits for them.
func (n *Network) Close() error {
	err := n.ln.Close()
	n.mu.Lock()
	for c := range n.open {
		_ = c.Close()
	}
	n.mu.Unlock()
	n.wg.Wait()
	_ = os.Remove(n.sock)
	return err
}

func (n *Network) accept() {
	defer n.wg.Done()
	for {
		conn, err := n.ln.Accept()
		if err != nil {
			return
		}
		n.track(conn, true)
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			defer n.track(conn, false)
			n.serve(conn)
		}()
	}
}

func (n *Network) track(c net.Conn, open bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if open {
		n.open[c] = true
	} else {
		delete(n.open, c)
	}
}

// serve answers one CONNECT and then copies bytes both ways until either side closes. An address
// no simulated node listens on is refused, as an unreachable node is.
func (n *Network) serve(conn net.Conn) {
	defer func() { _ = conn.Close() }()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil || req.Method != http.MethodConnect {
		_, _ = io.WriteString(conn, "HTTP/1.1 400 Bad Request\r\n\r\n")
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	n.mu.Lock()
	local, ok := n.routes[req.Host]
	n.mu.Unlock()
	if !ok {
		_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\nno simulated node listens on "+req.Host+"\n")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	backend, err := (&net.Dialer{}).DialContext(ctx, "tcp", local)
	cancel()
	if err != nil {
		_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\n"+err.Error()+"\n")
		return
	}
	defer func() { _ = backend.Close() }()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(backend, conn)
	go pipe(conn, backend)
	<-done
	// One side is done: end the other (a kubelet stopped, or the proxy closing).
	_ = conn.Close()
	_ = backend.Close()
	<-done
}
