package hypervsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// parents models parent.ps1's copies of parent disk sources: the shares the host's computer
// account can read, the scheduled tasks (one per hash, the task name is the lock) and the failure
// markers the tasks leave.
type parents struct {
	shares  map[string][]byte // UNC path (lower case) -> contents
	client  *http.Client
	delay   time.Duration
	hold    chan struct{}         // while not nil, copies wait for it to close before they fetch
	tasks   map[string]*fetchTask // by hash
	markers map[string]wire.ParentState
	// started counts the copies started (Start-ScheduledTask), by hash.
	started map[string]int
}

// fetchTask is one registered copy task; running until its copy ended, or until the host
// restarted (stopped: the copy ends without a result, its temporary file left behind).
type fetchTask struct {
	running, stopped bool
	file             string
}

// parentModel returns the host's parent copies model, made on first use (callers hold h.mu).
func (h *Host) parentModel() *parents {
	if h.parents == nil {
		h.parents = &parents{shares: map[string][]byte{}, client: http.DefaultClient, tasks: map[string]*fetchTask{},
			markers: map[string]wire.ParentState{}, started: map[string]int{}}
	}
	return h.parents
}

// AddShareFile puts a file on a simulated SMB share the host's computer account can read.
func (h *Host) AddShareFile(unc string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.parentModel().shares[strings.ToLower(unc)] = data
}

// SetHTTPClient sets the client the host downloads https sources with (a test server's client,
// which trusts its certificate).
func (h *Host) SetHTTPClient(c *http.Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.parentModel().client = c
}

// SetCopyDelay makes every parent disk copy take at least d.
func (h *Host) SetCopyDelay(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.parentModel().delay = d
}

// HoldCopies makes the copies started from now on wait, before they fetch, until HoldCopies(false).
func (h *Host) HoldCopies(hold bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.parentModel()
	switch {
	case hold && p.hold == nil:
		p.hold = make(chan struct{})
	case !hold && p.hold != nil:
		close(p.hold)
		p.hold = nil
	}
}

// RestartDuringCopies stops every running copy as a host restart does: the tasks are no longer
// running, and each leaves a partial temporary file and no result.
func (h *Host) RestartDuringCopies() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sha, t := range h.parentModel().tasks {
		if t.running {
			t.running, t.stopped = false, true
			partial := fmt.Sprintf(`%s.partial\%s.vhdx`, strings.TrimSuffix(t.file, sha+".vhdx")+sha, h.newID())
			h.vol(partial).files[strings.ToLower(partial)] = 1 << 20
		}
	}
}

// ParentCopies counts the parent disk copies the host started for a hash.
func (h *Host) ParentCopies(sha string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.parentModel().started[strings.ToLower(sha)]
}

// parent mirrors parent.ps1: a verified copy is ready; a running task is copying; a failure
// marker is reported once; otherwise a new copy starts (its work folder emptied first).
func (h *Host) parent(in wire.ParentInput) (any, error) {
	if !sha256Hex(in.SHA256) {
		return nil, fail(wire.KindInvalidSpec, "sha256 %s is not 64 hexadecimal digits", in.SHA256)
	}
	p := h.parentModel()
	sha := strings.ToLower(in.SHA256)
	file := wire.ParentCachePath(in.DiskPath, sha)
	cache := strings.TrimSuffix(file, sha+".vhdx")
	work, failed := cache+sha+".partial", cache+sha+".failed"
	task := p.tasks[sha]
	if _, ok := h.vol(file).files[strings.ToLower(file)]; ok {
		if task != nil {
			delete(p.tasks, sha)
			h.removeTree(work)
		}
		return wire.ParentState{State: wire.ParentReady, Path: file}, nil
	}
	if task != nil && task.running {
		return wire.ParentState{State: wire.ParentCopying, Path: file}, nil
	}
	delete(p.tasks, sha)
	if m, ok := p.markers[strings.ToLower(failed)]; ok {
		delete(p.markers, strings.ToLower(failed))
		h.unlink(failed)
		h.removeTree(work)
		m.State, m.Path = wire.ParentFailed, file
		return m, nil
	}
	h.removeTree(work)
	if err := h.write(work+`\request.json`, 256); err != nil {
		return nil, err
	}
	task = &fetchTask{running: true, file: file}
	p.tasks[sha] = task
	p.started[sha]++
	go h.runFetch(task, in.URL, sha, work, file, failed, p.delay, p.hold)
	return wire.ParentState{State: wire.ParentCopying, Path: file}, nil
}

// runFetch is the scheduled task (Invoke-CapwinFetch): download or copy to a temporary name,
// hash, rename when the hash matches; otherwise a failure marker and no file.
func (h *Host) runFetch(task *fetchTask, url, sha, work, file, failed string, delay time.Duration, hold chan struct{}) {
	time.Sleep(delay)
	if hold != nil {
		<-hold
	}
	data, err := h.getSource(url)
	h.mu.Lock()
	defer h.mu.Unlock()
	if task.stopped {
		return
	}
	defer func() { task.running = false }()
	mark := func(kind, message string) {
		h.parentModel().markers[strings.ToLower(failed)] = wire.ParentState{Kind: kind, Message: message}
		h.vol(failed).files[strings.ToLower(failed)] = int64(len(message))
	}
	if err != nil {
		mark(wire.KindFailed, fmt.Sprintf("copy %s as the host computer account: %v", url, err))
		return
	}
	temp := fmt.Sprintf(`%s\%s.vhdx`, work, h.newID())
	if err := h.write(temp, int64(len(data))); err != nil {
		mark(wire.KindFailed, fmt.Sprintf("copy %s as the host computer account: %v", url, err))
		return
	}
	sum := sha256.Sum256(data)
	switch got := hex.EncodeToString(sum[:]); {
	case got != sha:
		h.unlink(temp)
		mark(wire.KindInvalidSpec, fmt.Sprintf("%s does not match the pinned SHA-256 %s (parentDiskSource.sha256); the copy was deleted", url, sha))
	case h.vol(file).files[strings.ToLower(file)] > 0:
		h.unlink(temp)
	default:
		h.vol(file).files[strings.ToLower(file)] = h.vol(temp).files[strings.ToLower(temp)]
		h.vol(temp).delete(strings.ToLower(temp))
	}
}

// getSource reads an https URL with the host's HTTP client, or a UNC path from the shares.
func (h *Host) getSource(url string) ([]byte, error) {
	h.mu.Lock()
	p := h.parentModel()
	client, data, shared := p.client, p.shares[strings.ToLower(url)], false
	if _, ok := p.shares[strings.ToLower(url)]; ok {
		shared = true
	}
	h.mu.Unlock()
	if strings.HasPrefix(url, `\\`) {
		if !shared {
			return nil, fmt.Errorf("cannot find path '%s' because it does not exist", url)
		}
		return data, nil
	}
	if !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("the URI prefix is not recognized")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the remote server returned an error: (%d) %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return io.ReadAll(resp.Body)
}

// removeTree deletes a folder's files (Remove-Item -Recurse -Force).
func (h *Host) removeTree(dir string) {
	prefix := strings.ToLower(dir) + `\`
	for _, v := range h.volumes() {
		for p := range v.files {
			if strings.HasPrefix(p, prefix) {
				h.unlink(p)
			}
		}
	}
}

func sha256Hex(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}
