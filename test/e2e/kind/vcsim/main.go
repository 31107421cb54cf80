//go:build e2e

// Command vcsim serves govmomi's vCenter simulator (github.com/vmware/govmomi/simulator, the
// version in capwin's go.mod) with its default VPX model: datacenter DC0, cluster DC0_C0,
// datastore LocalDS_0, network "VM Network"; any user and password are accepted. The kind e2e
// runs it as a Deployment. govmomi's own vcsim command is a module of its own that the Go module
// proxy does not serve, so this is the part of it the e2e needs, plus guest operations
// (test/framework/vcsim) instead of vcsim's Docker containers: files copied into a VM are kept,
// and capwin's log collectors started through VMware Tools are run by the e2e's guest simulator,
// which knows the guests (-guest-agent):
//
//	vcsim -l 0.0.0.0:8989 -tlscert tls.crt -tlskey tls.key -guest-agent http://sim:8081
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"

	"github.com/capwin/capwin/test/framework/vcsim"
)

func main() {
	listen := flag.String("l", "127.0.0.1:8989", "listen address")
	certFile := flag.String("tlscert", "", "TLS certificate (PEM); with -tlskey, else a generated one")
	keyFile := flag.String("tlskey", "", "TLS private key (PEM)")
	agent := flag.String("guest-agent", "", "base URL of the guest simulator that runs log collectors in the guests (POST <url>"+collectPath+"?vm=<VM reference>)")
	flag.Parse()
	if err := run(*listen, *certFile, *keyFile, *agent); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim:", err)
		os.Exit(1)
	}
}

// collectPath is the guest simulator's path that runs a log collector in a VM's guest.
const collectPath = "/guest/collect"

func run(listen, certFile, keyFile, agent string) error {
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		return err
	}
	defer model.Remove()
	ops := vcsim.Install(model)
	if agent != "" {
		ops.RunCollectors(forward(agent), nil)
	}
	// Guest file transfers: to vcsim's address as its clients reach it (the Service), with the
	// certificate vcsim serves.
	vcsim.HostsAtClientAddress(model)
	model.Service.Listen = &url.URL{Scheme: "https", Host: listen}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return err
		}
		model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	} else {
		model.Service.TLS = new(tls.Config)
	}
	server := model.Service.NewServer()
	defer server.Close()
	vcsim.TrustHosts(model, soap.ThumbprintSHA256(server.Certificate()))
	fmt.Printf("vcsim serving %s (datacenter DC0, cluster DC0_C0)\n", server.URL.String())

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return nil
}

// forward runs a collector by asking the guest simulator at agent.
func forward(agent string) vcsim.Collector {
	c := &http.Client{Timeout: time.Minute}
	return func(vm string, script []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, agent+collectPath+"?vm="+url.QueryEscape(vm), bytes.NewReader(script))
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("guest agent: %s: %s", resp.Status, bytes.TrimSpace(body))
		}
		return body, nil
	}
}
