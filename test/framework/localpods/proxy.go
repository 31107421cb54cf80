package localpods

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capwin/capwin/test/framework/nodenet"
)

// EgressConfig writes the API server's egress selector configuration into dir: its "cluster"
// network (webhooks and conversion of Services) goes through the HTTP CONNECT proxy on socket;
// pass the returned file as --egress-selector-config-file.
func EgressConfig(dir, socket string) (string, error) {
	path := filepath.Join(dir, "egress-selector.yaml")
	body := nodenet.EgressSelection(socket)
	return path, os.WriteFile(path, []byte(body), 0o600)
}

// ServeEgress serves the API server's CONNECT requests on the Unix socket until ctx ends.
func (r *Runner) ServeEgress(ctx context.Context, socket string) error {
	l, err := (&net.ListenConfig{}).Listen(ctx, "unix", socket)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.connect), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(l); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// connect tunnels one CONNECT request for CLUSTER-IP:PORT to the local port of the process that
// serves it.
func (r *Runner) connect(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	local, err := r.resolve(req.Context(), req.RequestURI)
	if err != nil {
		r.log.Info("egress", "to", req.RequestURI, "error", err.Error())
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	up, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(local))), 5*time.Second) //nolint:gosec // G704: loopback, at a port of a process this runner started
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = up.Close()
		_ = down.Close()
		return
	}
	go func() {
		_, _ = io.Copy(up, buf)
		_ = up.Close()
	}()
	_, _ = io.Copy(down, up)
	_ = down.Close()
}

// resolve maps CLUSTER-IP:PORT to a local port: the Service of that ClusterIP, its port's target
// port, and the pod its selector selects.
func (r *Runner) resolve(ctx context.Context, hostPort string) (int32, error) {
	host, portText, err := net.SplitHostPort(hostPort)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return 0, err
	}
	var services corev1.ServiceList
	if err := r.c.List(ctx, &services); err != nil {
		return 0, err
	}
	for _, s := range services.Items {
		if s.Spec.ClusterIP != host {
			continue
		}
		for _, sp := range s.Spec.Ports {
			if int(sp.Port) != port {
				continue
			}
			return r.localPort(s, sp)
		}
		return 0, fmt.Errorf("the Service %s/%s has no port %d", s.Namespace, s.Name, port)
	}
	return 0, fmt.Errorf("no Service has the ClusterIP %s", host)
}

// localPort is where the pod that s selects serves the service port sp.
func (r *Runner) localPort(s corev1.Service, sp corev1.ServicePort) (int32, error) {
	if len(s.Spec.Selector) == 0 {
		return 0, fmt.Errorf("the Service %s/%s selects nothing", s.Namespace, s.Name)
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pods {
		if p.key.Namespace != s.Namespace || !sel.Matches(labels.Set(p.labels)) {
			continue
		}
		target := sp.TargetPort
		if target.IntVal == 0 && target.StrVal == "" {
			target.IntVal = sp.Port
		}
		if local, ok := p.ports[p.containerPort(target)]; ok {
			return local, nil
		}
		return 0, fmt.Errorf("the pod of Deployment %s serves no port %s of Service %s/%s", p.key, target.String(), s.Namespace, s.Name)
	}
	return 0, fmt.Errorf("no pod runs for Service %s/%s yet", s.Namespace, s.Name)
}
