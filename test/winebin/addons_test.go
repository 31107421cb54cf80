package winebin

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

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
	flags := scriptFlags(t, "../../templates/addons/kube-proxy-windows/base/start-kube-proxy.ps1", `(?s)\$flags = @\((.*?)\n\)`)
	for _, version := range Versions(t, "kubernetes", "kube-proxy.exe") {
		t.Run(version, func(t *testing.T) {
			p := NewPrefix(t)
			out := run(t, p, Exe(t, "kubernetes", version, "kube-proxy.exe"), flags...)
			addonPassed(t, "kube-proxy "+version, out.Output())
		})
	}
}

// TestFlanneldFlags: flanneld takes the flags and the net-conf.json of the flannel addon.
func TestFlanneldFlags(t *testing.T) {
	flags := scriptFlags(t, "../../templates/addons/flannel/start-flanneld.ps1", `(?m)^& \$flanneld (.*)$`)
	for _, version := range Versions(t, "flannel", "flanneld.exe") {
		t.Run(version, func(t *testing.T) {
			p := NewPrefix(t)
			writeFile(t, p, podEnv["$netConf"], flannelNetConf(t))
			out := run(t, p, Exe(t, "flannel", version, "flanneld.exe"), flags...)
			addonPassed(t, "flanneld "+version, out.Output())
		})
	}
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
	raw, err := os.ReadFile("../../templates/addons/flannel/config.yaml")
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

// addonStop is where the stage stops an addon: it looks for the cluster.
func addonStop(text string) bool {
	return strings.Contains(text, "KUBERNETES_SERVICE_HOST")
}
