package hypervsim

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/test/metrics"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

const parent = `C:\golden\win2022.vhdx`

var folders = wire.Placement{VMPath: `C:\capwin\vms`, DiskPath: `C:\capwin\disks`}

// simHost starts one simulated host and a real WinRM connection to it.
func simHost(t *testing.T, basic bool) (*Host, *wsman.Server, *hyperv.Conn) {
	t.Helper()
	h := NewHost("hv1", 65536, []string{"external"}, map[string]int64{parent: 30 << 30})
	h.SetJobDelay(100 * time.Millisecond)
	srv, err := h.Serve(map[string]string{"capwin": "Host-pw1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	conn, err := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1",
		Basic: basic, CABundle: srv.CACertPEM()}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return h, srv, conn
}

func createInput(uid string, iso []byte) wire.CreateInput {
	return wire.CreateInput{VMKey: wire.VMKey{Placement: folders, UID: uid}, Name: "m-" + uid, ParentDisk: parent,
		Processors: 2, MemoryBytes: 4 << 30, SecureBoot: wire.SecureBoot{Enabled: true, Template: "MicrosoftWindows"},
		NICs:        []wire.NICInput{{Switch: "external", MAC: "02AABBCCDD01", VLANID: 12}},
		ConfigDrive: base64.StdEncoding.EncodeToString(iso), Settings: hyperv.DefaultVMSettings()}
}

// TestOperationsThroughWinRM runs every operation through the real WinRM client (NTLM) and checks
// the model: create is idempotent, power goes through a host job, eject and remove leave nothing.
func TestOperationsThroughWinRM(t *testing.T) {
	h, _, conn := simHost(t, false)
	opsBefore, tripsBefore := winrmCounts(t)
	ctx := context.Background()
	var info wire.HostInfo
	if err := conn.Run(ctx, wire.OpHost, folders, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "hv1" || strings.Join(info.Switches, ",") != "external" || info.FreeMemoryMiB != 65536 {
		t.Fatalf("host info %+v", info)
	}
	iso, err := wire.ConfigDrive(map[string][]byte{"meta-data": []byte("instance-id: u1\n"), "user-data": []byte("#ps1_sysnative\n")})
	if err != nil {
		t.Fatal(err)
	}
	var v, again wire.View
	if err := conn.Run(ctx, wire.OpCreate, createInput("u1", iso), &v); err != nil {
		t.Fatal(err)
	}
	if err := conn.Run(ctx, wire.OpCreate, createInput("u1", iso), &again); err != nil || again.ID != v.ID || len(h.VMs()) != 1 {
		t.Fatalf("second create: %v, id %s vs %s, %d VMs", err, again.ID, v.ID, len(h.VMs()))
	}
	if !strings.Contains(v.Notes, "capwin-uid:u1") || v.State != "Off" || len(v.DVDs) != 1 || v.NICs[0].MAC != "02AABBCCDD01" {
		t.Fatalf("view %+v", v)
	}
	if !bytes.Equal(h.File(v.DVDs[0]), iso) {
		t.Fatal("the config drive on the host is not the one sent")
	}
	var found wire.Found
	if err := conn.Run(ctx, wire.OpFind, wire.VMKey{Placement: folders, UID: "u1"}, &found); err != nil || !found.Found || found.VM.ID != v.ID {
		t.Fatalf("find by UID: %v %+v", err, found)
	}
	var job wire.JobRef
	if err := conn.Run(ctx, wire.OpPower, wire.PowerInput{ID: v.ID, Action: wire.PowerStart}, &job); err != nil || job.Job == "" {
		t.Fatalf("power on: %v %+v", err, job)
	}
	waitJob(t, conn, job.Job)
	if h.VMs()[0].State != "Running" {
		t.Fatalf("state %s after the job", h.VMs()[0].State)
	}
	// Power off: the VM stays off, however often the host settles its jobs (the power-on job
	// that ended before must not apply again).
	if err := conn.Run(ctx, wire.OpPower, wire.PowerInput{ID: v.ID, Action: wire.PowerOff}, &job); err != nil || job.Job == "" {
		t.Fatalf("power off: %v %+v", err, job)
	}
	waitJob(t, conn, job.Job)
	for range 20 {
		if st := h.VMs()[0].State; st != "Off" {
			t.Fatalf("state %s after the power-off job", st)
		}
	}
	if err := conn.Run(ctx, wire.OpEject, wire.VMKey{Placement: folders, ID: v.ID, UID: "u1"}, nil); err != nil {
		t.Fatal(err)
	}
	if vm := h.VMs()[0]; len(vm.DVDs) != 0 || h.File(v.DVDs[0]) != nil {
		t.Fatalf("config drive still there: %+v", vm.DVDs)
	}
	if err := conn.Run(ctx, wire.OpRemove, wire.VMKey{Placement: folders, ID: v.ID, UID: "u1"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(h.VMs()) != 0 || strings.Join(h.Files(), ",") != strings.ToLower(parent) {
		t.Fatalf("left behind: %d VMs, files %v", len(h.VMs()), h.Files())
	}
	ops, trips := winrmCounts(t)
	t.Logf("%.0f operations, %.0f WinRM round trips", ops-opsBefore, trips-tripsBefore)
	if ops <= opsBefore || trips <= tripsBefore {
		t.Errorf("capwin_winrm_operations_total %v -> %v, capwin_winrm_round_trips_total %v -> %v: not counted", opsBefore, ops, tripsBefore, trips)
	}
}

// winrmCounts reads the manager's WinRM operation and round-trip counters.
func winrmCounts(t *testing.T) (ops, trips float64) {
	t.Helper()
	ops, err := metrics.Value("capwin_winrm_operations_total", nil)
	if err != nil {
		t.Fatal(err)
	}
	if trips, err = metrics.Value("capwin_winrm_round_trips_total", nil); err != nil {
		t.Fatal(err)
	}
	return ops, trips
}

func waitJob(t *testing.T, conn *hyperv.Conn, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var st wire.JobState
		if err := conn.Run(context.Background(), wire.OpJob, wire.JobRef{Job: id}, &st); err != nil {
			t.Fatal(err)
		}
		if st.State == "succeeded" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("job did not finish")
}

// TestErrorsAreTyped: script failures and connection failures come back as kinds capwin acts on.
func TestErrorsAreTyped(t *testing.T) {
	h, srv, conn := simHost(t, true)
	ctx := context.Background()
	in := createInput("u2", nil)
	in.ParentDisk = `C:\golden\missing.vhdx`
	expectKind(t, conn.Run(ctx, wire.OpCreate, in, nil), wire.KindInvalidSpec)
	h.SetFreeDisk(0)
	expectKind(t, conn.Run(ctx, wire.OpCreate, createInput("u2", nil), nil), wire.KindDiskFull)
	h.SetFreeDisk(1 << 40)
	evil := wire.Script{Name: "evil", Text: "param($In)\nRemove-Item -Recurse C:\\\n"}
	if err := conn.Run(ctx, evil, nil, nil); err == nil || !strings.Contains(err.Error(), "not one of capwin's static scripts") {
		t.Fatalf("a foreign script was not refused: %v", err)
	}
	wrong, _ := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "nope",
		CABundle: srv.CACertPEM()}, 5*time.Second)
	expectKind(t, wrong.Run(ctx, wire.OpHost, folders, nil), wire.KindAuth)
	untrusted, _ := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1"}, 5*time.Second)
	expectKind(t, untrusted.Run(ctx, wire.OpHost, folders, nil), wire.KindTLS)
	srv.SetDown(true)
	expectKind(t, conn.Run(ctx, wire.OpHost, folders, nil), wire.KindUnreachable)
	srv.SetDown(false)
	if err := conn.Run(ctx, wire.OpHost, folders, nil); err != nil {
		t.Fatalf("after the host came back: %v", err)
	}
}

func expectKind(t *testing.T, err error, kind string) {
	t.Helper()
	if got := hyperv.KindOf(err); got != kind {
		t.Fatalf("error kind %q, want %q (%v)", got, kind, err)
	}
}

// TestConcurrentNTLM: operations that share one NTLM connection run concurrently without the
// client's handshakes crossing (the simulator checks NTLM per TCP connection, as Windows does).
func TestConcurrentNTLM(t *testing.T) {
	_, _, conn := simHost(t, false)
	errs := make(chan error, 12)
	for range 12 {
		go func() { errs <- conn.Run(context.Background(), wire.OpHost, folders, nil) }()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLostChallengeIsNotAnAuthFailure: a host that forgets its NTLM challenge with the
// connection it sent it on (a WinRM service restarted between the two legs) refuses the
// AUTHENTICATE that comes on a new connection. That 401 says nothing about the credentials: the
// client runs the handshake again, once, and the operation succeeds. Wrong credentials on one
// connection still fail at the first AUTHENTICATE, so a bad password costs one failed logon.
func TestLostChallengeIsNotAnAuthFailure(t *testing.T) {
	_, srv, _ := simHost(t, false)
	ctx := context.Background()
	run := func(password string) error { // on a new connection, which starts with a handshake
		conn, err := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin",
			Password: password, CABundle: srv.CACertPEM()}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.Run(ctx, wire.OpHost, folders, nil)
	}
	srv.LoseNextChallenges(1)
	if err := run("Host-pw1"); err != nil {
		t.Fatalf("a lost challenge failed the operation: %v", err)
	}
	srv.LoseNextChallenges(2)
	expectKind(t, run("Host-pw1"), wire.KindAuth) // lost twice: no third try
	if err := run("Host-pw1"); err != nil {
		t.Fatalf("after two lost challenges: %v", err)
	}
	before := srv.Stats().AuthFailures
	expectKind(t, run("nope"), wire.KindAuth)
	if n := srv.Stats().AuthFailures - before; n != 1 {
		t.Fatalf("a wrong password cost %d failed logons, want 1", n)
	}
}

// TestAcceptScriptsOfAnotherRelease: a host refuses an operation script it does not know (an older
// release's host.ps1) until AcceptScripts registers that release's scripts; then it runs it as the
// operation of the same name.
func TestAcceptScriptsOfAnotherRelease(t *testing.T) {
	_, _, conn := simHost(t, false)
	older := wire.Script{Name: wire.OpHost.Name, Text: wire.OpHost.Text + "\n# as an older release wrote it\n"}
	var info wire.HostInfo
	if err := conn.Run(context.Background(), older, folders, &info); err == nil || !strings.Contains(err.Error(), "not one of capwin's static scripts") {
		t.Fatalf("an unknown release's script was run: %v", err)
	}
	AcceptScripts(Release{Scripts: map[string]string{older.Name: older.Text, wire.Runner.Name: wire.Runner.Text}})
	if err := conn.Run(context.Background(), older, folders, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "hv1" {
		t.Fatalf("host info %+v", info)
	}
}
