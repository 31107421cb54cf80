package winebin

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The pod environment the addons' start scripts read, as the DaemonSets set it on a node.
var podEnv = map[string]string{
	"$env:NODE_NAME":    "win-0",
	"$env:NODE_IP":      "10.0.0.21",
	"$env:NETWORK_NAME": "flannel.4096",
	"$env:POD_CIDR":     "10.244.0.0/16",
	"$sourceVip":        "10.244.1.2",
	"$netConf":          `C:\capwin-test\net-conf.json`,
}

// TestKubeProxyFlags: each kube-proxy of the stage takes the flags start-kube-proxy.ps1 gives it
// (HostProcess kube-proxy, kernelspace mode, overlay): it gets past flag parsing and its
// configuration's validation and stops where it needs the cluster.
func TestKubeProxyFlags(t *testing.T) {
	flags := scriptFlags(t, "../../../templates/addons/kube-proxy-windows/base/start-kube-proxy.ps1", `(?s)\$flags = @\((.*?)\n\)`)
	for _, version := range Versions(t, "kubernetes", "kube-proxy.exe") {
		t.Run(version, func(t *testing.T) {
			p := NewPrefix(t)
			out := run(t, p, Exe(t, "kubernetes", version, "kube-proxy.exe"), flags...)
			addonPassed(t, "kube-proxy "+version, out.Output())
		})
	}
}

// TestFlanneldFlags: flanneld takes the flags of the flannel addon, reaches the cluster with the
// pod's in-cluster configuration (a closed loopback port here), reads and parses the addon's
// net-conf.json and waits for the API server.
func TestFlanneldFlags(t *testing.T) {
	flags := scriptFlags(t, "../../../templates/addons/flannel/start-flanneld.ps1", `(?m)^& \$flanneld (.*)$`)
	c := newCluster(t)
	for _, version := range Versions(t, "flannel", "flanneld.exe") {
		t.Run(version, func(t *testing.T) {
			p := NewPrefix(t)
			writeFile(t, p, podEnv["$netConf"], flannelNetConf(t))
			serviceAccount(t, p, c)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out, err := p.Exec(ctx, Program{Exe: Exe(t, "flannel", version, "flanneld.exe"), Args: flags, Env: inCluster,
				Until: "for node controller to sync"})
			if err != nil {
				t.Fatalf("%v:\n%s", err, tail(out.Output()))
			}
			addonPassed(t, "flanneld "+version, out.Output())
		})
	}
}

// inCluster is the environment a HostProcess pod gets: the node's name and the API server's
// Service, here a closed loopback port.
var inCluster = []string{"NODE_NAME=win-0", "KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=1"}

// serviceAccount writes the pod's service account token and CA where a HostProcess container
// finds them (the path client-go reads, on the current drive).
func serviceAccount(t *testing.T, p *Prefix, c cluster) {
	dir := `C:\var\run\secrets\kubernetes.io\serviceaccount\`
	writeFile(t, p, dir+"token", "capwin-test-token")
	writeFile(t, p, dir+"ca.crt", c.caPEM)
	writeFile(t, p, dir+"namespace", "kube-flannel")
}

// scriptFlags are the quoted arguments a start script passes, with the pod's environment in
// place of its variables.
func scriptFlags(t *testing.T, script, block string) []string {
	t.Helper()
	raw, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(block).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s: no %s", script, block)
	}
	var flags []string
	for _, f := range regexp.MustCompile(`"[^"]*"|'[^']*'|--[^\s,]+`).FindAllString(string(m[1]), -1) {
		f = strings.Trim(f, `"'`)
		for k, v := range podEnv {
			f = strings.ReplaceAll(f, k, v)
		}
		if strings.Contains(f, "$") {
			t.Fatalf("%s: %s has a variable the test does not set", script, f)
		}
		flags = append(flags, f)
	}
	if len(flags) == 0 {
		t.Fatalf("%s passes no flags", script)
	}
	return flags
}

// flannelNetConf is net-conf.json of the Windows ConfigMap, with the template variables' defaults.
func flannelNetConf(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../../templates/addons/flannel/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range bytes.Split(raw, []byte("\n---")) {
		var cm struct {
			Metadata struct{ Name string }
			Data     map[string]string
		}
		if err := yaml.Unmarshal(d, &cm); err != nil {
			t.Fatal(err)
		}
		if conf, ok := cm.Data["net-conf.json"]; ok && strings.Contains(cm.Metadata.Name, "windows") {
			return regexp.MustCompile(`\$\{[A-Z_]+:=([^}]*)\}`).ReplaceAllString(conf, "$1")
		}
	}
	t.Fatal("templates/addons/flannel/config.yaml has no Windows ConfigMap with net-conf.json")
	return ""
}

// addonPassed: the program parsed its flags and configuration without a warning of removal and
// stopped at the cluster, which the stage does not have.
func addonPassed(t *testing.T, what, text string) {
	t.Helper()
	t.Logf("%s ended with:\n%s", what, lastLines(text, 6))
	// A GA or deprecated feature gate and a deprecated flag work today and stop the program once
	// removed: they fail the stage now.
	for _, bad := range []string{"unknown flag", "flag provided but not defined", "invalid configuration", "invalid argument",
		"failed to parse", "setting ga feature gate", "setting deprecated feature gate", "has been deprecated"} {
		if strings.Contains(strings.ToLower(text), bad) {
			t.Fatalf("%s refused its arguments (%q):\n%s", what, bad, tail(text))
		}
	}
	if !addonStop(text) {
		t.Fatalf("%s did not get past its arguments:\n%s", what, tail(text))
	}
}

// addonStop is where the stage stops an addon: kube-proxy at the cluster's configuration, which
// it looks for after validating its own; flanneld waiting for the API server after parsing
// net-conf.json.
func addonStop(text string) bool {
	return strings.Contains(text, "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST") ||
		strings.Contains(text, "for node controller to sync")
}
