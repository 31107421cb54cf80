package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSpecFile(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--root", "/run/runc", "--log", "/l", "create", "--bundle", "/b", "id"}, "/b/config.json"},
		{[]string{"--systemd-cgroup", "run", "-b=/x", "id"}, "/x/config.json"},
		{[]string{"create", "id"}, "config.json"},
		{[]string{"--log-format", "json", "exec", "--process", "/p.json", "--detach", "id"}, "/p.json"},
		{[]string{"exec", "-p", "/q.json", "id"}, "/q.json"},
		{[]string{"--root", "/r", "state", "id"}, ""},
		{[]string{"--version"}, ""},
	}
	for _, c := range cases {
		if got := specFile(c.args); got != c.want {
			t.Errorf("specFile(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestDropCaps(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.json")
	spec := `{"ociVersion":"1.2.0","process":{"args":["sh"],"capabilities":{` +
		`"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE","CAP_NET_ADMIN"],"effective":["CAP_SYS_RESOURCE"],` +
		`"permitted":["CAP_CHOWN"]}},"hostname":"h"}`
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dropCaps(file, map[string]bool{"CAP_SYS_RESOURCE": true}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Process struct {
			Args         []string            `json:"args"`
			Capabilities map[string][]string `json:"capabilities"`
		} `json:"process"`
		Hostname string `json:"hostname"`
	}
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"bounding": {"CAP_CHOWN", "CAP_NET_ADMIN"}, "effective": {}, "permitted": {"CAP_CHOWN"}}
	if !reflect.DeepEqual(got.Process.Capabilities, want) || got.Hostname != "h" || len(got.Process.Args) != 1 {
		t.Errorf("after dropCaps: %s", data)
	}
	// A process.json (exec) has the capabilities at the top level.
	proc := filepath.Join(dir, "process.json")
	if err := os.WriteFile(proc, []byte(`{"args":["ls"],"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dropCaps(proc, map[string]bool{"CAP_SYS_RESOURCE": true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(proc); string(data) != `{"args":["ls"],"capabilities":{"bounding":["CAP_KILL"]}}` {
		t.Errorf("process.json after dropCaps: %s", data)
	}
}

func TestRaiseOOMScoreAdj(t *testing.T) {
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skip(err)
	}
	own := strings.TrimSpace(string(b))
	p := map[string]any{"oomScoreAdj": float64(-1000)}
	if !raiseOOMScoreAdj(p) || fmt.Sprint(p["oomScoreAdj"]) != own {
		t.Errorf("oomScoreAdj -1000 became %v, want this process's %s", p["oomScoreAdj"], own)
	}
	p = map[string]any{"oomScoreAdj": float64(1000)}
	if raiseOOMScoreAdj(p) || p["oomScoreAdj"] != float64(1000) {
		t.Errorf("oomScoreAdj 1000 changed to %v", p["oomScoreAdj"])
	}
}
