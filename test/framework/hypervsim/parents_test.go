package hypervsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// waitParent asks parent.ps1 until the copy is no longer copying.
func waitParent(t *testing.T, conn *hyperv.Conn, in wire.ParentInput) wire.ParentState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st wire.ParentState
		if err := conn.Run(context.Background(), wire.OpParent, in, &st); err != nil {
			t.Fatal(err)
		}
		if st.State != wire.ParentCopying || time.Now().After(deadline) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parentFiles lists the host's files in the parents cache folder.
func parentFiles(h *Host) []string {
	var out []string
	for _, p := range h.Files() {
		if strings.Contains(p, `\parents\`) {
			out = append(out, p)
		}
	}
	return out
}

// TestParentDiskFromHTTPS: the first ask starts one download (copying); once verified the copy
// is ready at <diskPath>\parents\<sha256>.vhdx, later asks reuse it without a second download, and
// a VM created on it has it as its parent.
func TestParentDiskFromHTTPS(t *testing.T) {
	h, _, conn := simHost(t, false)
	image := []byte("golden windows image")
	var gets atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		gets.Add(1)
		_, _ = w.Write(image)
	}))
	t.Cleanup(srv.Close)
	h.SetHTTPClient(srv.Client())
	in := wire.ParentInput{DiskPath: folders.DiskPath, URL: srv.URL + "/win2022.vhdx", SHA256: hashOf(image)}
	var st wire.ParentState
	if err := conn.Run(context.Background(), wire.OpParent, in, &st); err != nil || st.State != wire.ParentCopying {
		t.Fatalf("first ask: %v %+v, want copying", err, st)
	}
	want := wire.ParentCachePath(folders.DiskPath, in.SHA256)
	if st = waitParent(t, conn, in); st.State != wire.ParentReady || st.Path != want {
		t.Fatalf("copy: %+v, want ready at %s", st, want)
	}
	if st = waitParent(t, conn, in); st.State != wire.ParentReady || h.ParentCopies(in.SHA256) != 1 || gets.Load() != 1 {
		t.Fatalf("second ask: %+v after %d copies and %d downloads, want ready after 1", st, h.ParentCopies(in.SHA256), gets.Load())
	}
	if files := parentFiles(h); len(files) != 1 || files[0] != strings.ToLower(want) {
		t.Fatalf("parents folder holds %v, want only %s (no request or temporary file)", files, want)
	}
	ci := createInput("u7", []byte("iso"))
	ci.ParentDisk = st.Path
	var v wire.View
	if err := conn.Run(context.Background(), wire.OpCreate, ci, &v); err != nil {
		t.Fatal(err)
	}
	if vm := h.VMs()[0]; vm.Parent != want {
		t.Fatalf("VM parent %s, want %s", vm.Parent, want)
	}
}

// TestParentDiskHashMismatch: a share file whose hash differs is deleted and reported once as
// InvalidSpec, leaving no file; the next ask copies again (the source may have been fixed). A
// missing share file fails as a copy error, not InvalidSpec.
func TestParentDiskHashMismatch(t *testing.T) {
	h, _, conn := simHost(t, false)
	unc := `\\fs01\images\win2022.vhdx`
	h.AddShareFile(unc, []byte("tampered image"))
	in := wire.ParentInput{DiskPath: folders.DiskPath, URL: unc, SHA256: strings.ToUpper(hashOf([]byte("golden image")))}
	st := waitParent(t, conn, in)
	if st.State != wire.ParentFailed || st.Kind != wire.KindInvalidSpec || !strings.Contains(st.Message, "does not match the pinned SHA-256") ||
		strings.Contains(st.Message, hashOf([]byte("tampered image"))) {
		t.Fatalf("mismatch: %+v, want failed InvalidSpec without the file's own hash (a hash oracle)", st)
	}
	if files := parentFiles(h); len(files) != 0 {
		t.Fatalf("parents folder holds %v after a mismatch, want nothing", files)
	}
	h.AddShareFile(unc, []byte("golden image"))
	if st = waitParent(t, conn, in); st.State != wire.ParentReady || h.ParentCopies(in.SHA256) != 2 {
		t.Fatalf("after the share was fixed: %+v after %d copies, want ready after 2", st, h.ParentCopies(in.SHA256))
	}
	in.URL = `\\fs01\images\missing.vhdx`
	in.SHA256 = hashOf([]byte("other"))
	if st = waitParent(t, conn, in); st.State != wire.ParentFailed || st.Kind != wire.KindFailed || !strings.Contains(st.Message, "does not exist") {
		t.Fatalf("missing share file: %+v, want failed Failed", st)
	}
}

// TestParentDiskConcurrentAsks: creates of two machines asking for the same parent at once (two
// connections, Basic auth, so the operations really overlap) start one copy.
func TestParentDiskConcurrentAsks(t *testing.T) {
	h, srv, conn := simHost(t, true)
	h.SetCopyDelay(300 * time.Millisecond)
	other, err := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: "capwin", Password: "Host-pw1",
		Basic: true, CABundle: srv.CACertPEM()}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	unc := `\\fs01\images\win2025.vhdx`
	h.AddShareFile(unc, []byte("image 2025"))
	in := wire.ParentInput{DiskPath: folders.DiskPath, URL: unc, SHA256: hashOf([]byte("image 2025"))}
	var wg sync.WaitGroup
	for _, c := range []*hyperv.Conn{conn, other, conn, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st := waitParent(t, c, in); st.State != wire.ParentReady {
				t.Errorf("concurrent ask: %+v, want ready", st)
			}
		}()
	}
	wg.Wait()
	if n := h.ParentCopies(in.SHA256); n != 1 {
		t.Fatalf("%d copies, want 1", n)
	}
}

// TestVMSettingsThroughWinRM: the settings reach Set-VM; a spec without them keeps what capwin
// always set (no automatic checkpoints, TurnOff) and the host's defaults for the rest.
func TestVMSettingsThroughWinRM(t *testing.T) {
	h, _, conn := simHost(t, false)
	ctx := context.Background()
	var v wire.View
	if err := conn.Run(ctx, wire.OpCreate, createInput("d1", []byte("iso")), &v); err != nil {
		t.Fatal(err)
	}
	in := createInput("s1", []byte("iso"))
	in.Settings = wire.VMSettings{CheckpointType: "Standard", AutomaticCheckpoints: true, AutomaticStartAction: "Start", AutomaticStartDelay: 90, AutomaticStopAction: "ShutDown"}
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		t.Fatal(err)
	}
	got := map[string]VMSettings{}
	for _, vm := range h.VMs() {
		got[vm.Name] = vm.Settings
	}
	defaults := VMSettings{CheckpointType: "Production", AutomaticStartAction: "StartIfRunning", AutomaticStopAction: "TurnOff"}
	set := VMSettings{CheckpointType: "Standard", AutomaticCheckpoints: true, AutomaticStartAction: "Start", AutomaticStartDelay: 90, AutomaticStopAction: "ShutDown"}
	if got["m-d1"] != defaults || got["m-s1"] != set {
		t.Fatalf("settings %+v, want %+v and %+v", got, defaults, set)
	}
	in = createInput("s2", []byte("iso"))
	in.Settings.AutomaticStopAction = ""
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err == nil || !strings.Contains(err.Error(), "AutomaticStopAction") {
		t.Fatalf("create without a stop action: %v, want Set-VM's binding error", err)
	}
}

// TestParentDiskCopyInterrupted: a host restart stops a copy, leaving a partial file and no result;
// the next ask empties the partial folder and starts again, and the host ends with the verified
// copy only.
func TestParentDiskCopyInterrupted(t *testing.T) {
	h, _, conn := simHost(t, false)
	h.SetCopyDelay(500 * time.Millisecond)
	unc := `\\fs01\images\win-restart.vhdx`
	h.AddShareFile(unc, []byte("image across a restart"))
	in := wire.ParentInput{DiskPath: folders.DiskPath, URL: unc, SHA256: hashOf([]byte("image across a restart"))}
	var st wire.ParentState
	if err := conn.Run(context.Background(), wire.OpParent, in, &st); err != nil || st.State != wire.ParentCopying {
		t.Fatalf("first ask: %v %+v", err, st)
	}
	h.RestartDuringCopies()
	if files := parentFiles(h); len(files) != 2 {
		t.Fatalf("after the restart the parents folder holds %v, want the request and a partial file", files)
	}
	h.SetCopyDelay(0)
	if st = waitParent(t, conn, in); st.State != wire.ParentReady || h.ParentCopies(in.SHA256) != 2 {
		t.Fatalf("after the restart: %+v after %d copies, want ready after 2", st, h.ParentCopies(in.SHA256))
	}
	time.Sleep(600 * time.Millisecond) // the stopped copy wakes up and must change nothing
	if files := parentFiles(h); len(files) != 1 || files[0] != strings.ToLower(st.Path) {
		t.Fatalf("parents folder holds %v, want only %s", files, st.Path)
	}
}
