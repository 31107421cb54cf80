// Command vcsim serves govmomi's vCenter simulator (github.com/vmware/govmomi/simulator, the
// version in capwin's go.mod) with its default VPX model: datacenter DC0, cluster DC0_C0,
// datastore LocalDS_0, network "VM Network"; any user and password are accepted. The kind e2e
// runs it as a Deployment. govmomi's own vcsim command is a module of its own that the Go module
// proxy does not serve, so this is the part of it the e2e needs:
//
//	vcsim -l 0.0.0.0:8989 -tlscert tls.crt -tlskey tls.key
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/vmware/govmomi/simulator"
)

func main() {
	listen := flag.String("l", "127.0.0.1:8989", "listen address")
	certFile := flag.String("tlscert", "", "TLS certificate (PEM); with -tlskey, else a generated one")
	keyFile := flag.String("tlskey", "", "TLS private key (PEM)")
	flag.Parse()
	if err := run(*listen, *certFile, *keyFile); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim:", err)
		os.Exit(1)
	}
}

func run(listen, certFile, keyFile string) error {
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		return err
	}
	defer model.Remove()
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
	fmt.Printf("vcsim serving %s (datacenter DC0, cluster DC0_C0)\n", server.URL.String())

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return nil
}
