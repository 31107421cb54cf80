package winebin

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWindowsExporterConfig: the windows_exporter of the node metrics addon reads the addon's
// config.yml with the flags start-windows-exporter.ps1 gives it: the file parses, every collector
// it names exists in that version and is enabled, and the exporter goes on to serve. (Wine has
// neither the performance counters nor WMI a Windows node has, so what the collectors read is not
// checked here.) --log.level=info overrides the file's warn, which hides the start messages.
func TestWindowsExporterConfig(t *testing.T) {
	config, err := os.ReadFile("../../../templates/addons/monitoring/config.yml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../../../templates/addons/monitoring/start-windows-exporter.ps1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), `"--config.file=$config" "--web.listen-address=:$port"`) {
		t.Fatal("start-windows-exporter.ps1 no longer passes --config.file and --web.listen-address: update this test")
	}
	want := regexp.MustCompile(`(?m)^\s+enabled: (.*)$`).FindStringSubmatch(string(config))
	if want == nil {
		t.Fatal("config.yml enables no collectors")
	}
	for _, version := range Versions(t, "windows-exporter", "windows_exporter.exe") {
		t.Run(version, func(t *testing.T) {
			p := NewPrefix(t)
			writeFile(t, p, `C:\capwin-test\config.yml`, string(config))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out, err := p.Exec(ctx, Program{Exe: Exe(t, "windows-exporter", version, "windows_exporter.exe"),
				Args: []string{`--config.file=C:\capwin-test\config.yml`, "--web.listen-address=127.0.0.1:0",
					"--log.level=info"}, Until: "Starting windows_exporter"})
			text := out.Output()
			if err != nil {
				t.Fatalf("%v:\n%s", err, tail(text))
			}
			t.Logf("windows_exporter %s:\n%s", version, lastLines(text, 8))
			enabled := regexp.MustCompile(`Enabled collectors: ([a-z_, ]+)`).FindStringSubmatch(text)
			if enabled == nil {
				t.Fatalf("no list of enabled collectors:\n%s", tail(text))
			}
			for _, c := range strings.Split(want[1], ",") {
				if !strings.Contains(", "+enabled[1]+",", ", "+strings.TrimSpace(c)+",") {
					t.Errorf("collector %s of config.yml is not enabled (%s)", c, enabled[1])
				}
			}
			if strings.Contains(text, "could not load config file") || strings.Contains(text, "Couldn't load collectors") {
				t.Errorf("windows_exporter refused the configuration:\n%s", tail(text))
			}
		})
	}
}
