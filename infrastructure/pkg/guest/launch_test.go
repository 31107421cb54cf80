package guest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

var vsphereStatus = LaunchStatus{GuestinfoKey: "guestinfo.capwin.bootstrap.status"}

func TestNewLaunch(t *testing.T) {
	nics := []NIC{
		{MAC: "00:50:56:ab:cd:01", DHCP4: true},
		{MAC: "00:50:56:AB:CD:02", Addresses: []string{"10.0.0.5/24", "fd00::5/64"}, Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"}},
	}
	l, err := NewLaunch("win-md-abc12", nics, vsphereStatus)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Network) != 1 {
		t.Fatalf("network = %+v, want only the static adapter", l.Network)
	}
	n := l.Network[0]
	if n.MAC != "00-50-56-AB-CD-02" || strings.Join(n.Addresses, ",") != "10.0.0.5/24,fd00::5/64" ||
		len(n.Routes) != 1 || n.Routes[0] != (LaunchRoute{To: "0.0.0.0/0", Via: "10.0.0.1"}) || strings.Join(n.Nameservers, ",") != "10.0.0.2" {
		t.Fatalf("adapter = %+v", n)
	}
	script, err := l.Script()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseLaunch(script)
	if err != nil {
		t.Fatal(err)
	}
	if back.ComputerName != "win-md-abc12" || back.BootstrapPath != GuestBootstrapPath || back.TaskName != "capwin-bootstrap" ||
		back.Status != vsphereStatus || len(back.Network) != 1 {
		t.Fatalf("document read back = %+v", back)
	}
}

func TestNewLaunchRejects(t *testing.T) {
	for name, c := range map[string]struct {
		computer string
		nics     []NIC
	}{
		"no name":        {"", nil},
		"not NetBIOS":    {"win_1", nil},
		"digits":         {"12345", nil},
		"bad DNS":        {"win", []NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}, Nameservers: []string{"dns"}}}},
		"long name":      {"abcdefghijklmnop", nil},
		"no MAC":         {"win", []NIC{{Addresses: []string{"10.0.0.5/24"}}}},
		"not CIDR":       {"win", []NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5"}}}},
		"gateway not IP": {"win", []NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}, Gateway4: "router"}}},
	} {
		if _, err := NewLaunch(c.computer, c.nics, vsphereStatus); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestLaunchListsNeverNull: the script runs in strict mode and reads every field.
func TestLaunchListsNeverNull(t *testing.T) {
	l, err := NewLaunch("win", []NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}}}, LaunchStatus{})
	if err != nil {
		t.Fatal(err)
	}
	script, _ := l.Script()
	back, _ := ParseLaunch(script)
	if back.Network == nil || back.Network[0].Routes == nil || back.Network[0].Nameservers == nil || back.SearchDomains == nil {
		t.Fatalf("null list in %+v", back)
	}
}

var launchLine = regexp.MustCompile(`^\$CapwinLaunch = '[A-Za-z0-9+/=]*'\r\n$`)

// FuzzLaunchScript: whatever the names, addresses, routes and search domains, the launcher is one
// base64 literal followed by the unchanged static script, and the document reads back as it was
// written.
func FuzzLaunchScript(f *testing.F) {
	f.Add("win-1", "10.0.0.5/24", "10.0.0.1", "10.0.0.2", "10.20.0.0/16", "10.0.0.254", "corp.example.com")
	f.Add("x'; Restart-Computer #", "fd00::1/64", "fd00::fffe", "$(calc)", "fd20::/48", "fe80::1", "'; Stop-Computer #")
	f.Fuzz(func(t *testing.T, name, addr, gw, dns, to, via, search string) {
		nic := NIC{MAC: "00:50:56:00:00:01", Addresses: []string{addr}, Gateway4: gw, Nameservers: []string{dns},
			Routes: []Route{{To: to, Via: via, Metric: 7}}, MTU: 1400, SearchDomains: []string{search}}
		l, err := NewLaunch(name, []NIC{nic}, vsphereStatus)
		if err != nil {
			return
		}
		script, err := l.Script()
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(script), "\r\n")
		if !launchLine.MatchString(first+"\r\n") || rest != launchScript {
			t.Fatalf("launcher is not one data line plus the static script:\n%s", first)
		}
		back, err := ParseLaunch(script)
		if err != nil || back.ComputerName != name || back.Network[0].Nameservers[0] != dns || back.SearchDomains[0] != search ||
			back.Network[0].MTU != 1400 || back.Network[0].Routes[len(back.Network[0].Routes)-1].Metric != 7 {
			t.Fatalf("read back %+v, %v", back, err)
		}
	})
}

// TestLaunchScriptParses checks the static launcher and a rendered one with the PowerShell grammar.
func TestLaunchScriptParses(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	l, err := NewLaunch("win", []NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.5/24"}, Gateway4: "10.0.0.1",
		Routes: []Route{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}}, MTU: 1400, SearchDomains: []string{"example.com"}}}, vsphereStatus)
	if err != nil {
		t.Fatal(err)
	}
	script, _ := l.Script()
	checkScript(t, "launch.ps1", script)
}

// checkScript parses the static script ps/<name> and a rendering of it with the PowerShell
// grammar, and checks the static script is ASCII (Windows PowerShell 5.1 reads BOM-less files as
// ANSI).
func checkScript(t *testing.T, name string, rendered []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, rendered, 0o600); err != nil {
		t.Fatal(err)
	}
	results, err := pscheck.Files(filepath.Join("ps", name), file)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if len(r.Errors) > 0 {
			t.Error(r.String())
		}
	}
	static, err := os.ReadFile(filepath.Join("ps", name))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range static {
		if c > 127 {
			t.Fatalf("%s: non-ASCII byte at %d: Windows PowerShell 5.1 reads BOM-less files as ANSI", name, i)
		}
	}
}

// TestLaunchProtectsTheBootstrapFile: the launcher limits the directory of the bootstrap script
// (it holds the join token) to SYSTEM and Administrators before anything else.
func TestLaunchProtectsTheBootstrapFile(t *testing.T) {
	calls, err := pscheck.Calls(filepath.Join("ps", "launch.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	topLevel := func(name string) func(pscheck.Call) bool {
		return func(c pscheck.Call) bool { return c.Function == "" && c.Name == name }
	}
	icacls, i := pscheck.Find(calls, topLevel("icacls.exe"))
	network, addresses := pscheck.Find(calls, topLevel("Set-Network"))
	want := []string{"$dir", "'/inheritance:r'", "'/grant:r'", "'*S-1-5-18:(OI)(CI)F'", "'/grant:r'", "'*S-1-5-32-544:(OI)(CI)F'"}
	if i < 0 || addresses < 0 || i > addresses || !slices.Equal(icacls.Args, want) {
		t.Errorf("icacls %v at call %d, Set-Network at call %d; want icacls.exe %v first", icacls.Args, i, addresses, want)
	}
	if !slices.Equal(network.Args, []string{"$Launch"}) {
		t.Errorf("Set-Network %v, want the launcher's document $Launch (the shared network.ps1 reads its network part)", network.Args)
	}
}
