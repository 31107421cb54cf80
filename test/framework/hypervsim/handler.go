package hypervsim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/test/pscheck"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

// opError is an operation failure as the scripts report it (Stop-Capwin kinds).
type opError struct{ kind, message string }

func (e *opError) Error() string { return e.message }

func fail(kind, format string, args ...any) error {
	return &opError{kind: kind, message: fmt.Sprintf(format, args...)}
}

// Run implements wsman.Handler: one operation of capwin's runner.
func (h *Host) Run(ctx context.Context, r wsman.Request) wsman.Result {
	if !runnerCommand(r.Command) || len(r.Arguments) > 0 {
		return wsman.Result{Stderr: []byte("hypervsim: not capwin's runner command"), ExitCode: 1}
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(r.Stdin)))
	var env wire.Envelope
	if err == nil {
		err = json.Unmarshal(raw, &env)
	}
	if err != nil {
		return wsman.Result{Stderr: []byte("hypervsim: stdin is not a base64 JSON envelope: " + err.Error()), ExitCode: 1}
	}
	op, ok := scriptByHash(wire.HashText(env.Script))
	if !ok || !library(env.Lib) {
		return wsman.Result{Stderr: []byte("hypervsim: not one of capwin's static scripts"), ExitCode: 1}
	}
	h.mu.Lock()
	skip, down := h.skipSyntax, h.down
	h.mu.Unlock()
	if down {
		return wsman.Result{Stderr: []byte("hypervsim: the node is down"), ExitCode: 1}
	}
	if !skip {
		if err := parses(env.Lib, env.Script); err != nil {
			return wsman.Result{Stderr: []byte("hypervsim: " + err.Error()), ExitCode: 1}
		}
	}
	if !h.hold(ctx, op.Name) {
		return wsman.Result{Stderr: []byte("hypervsim: the operation was stopped while hung"), ExitCode: 1}
	}
	h.mu.Lock()
	h.ops[op.Name]++
	h.mu.Unlock()
	result, err := h.applyAs(releaseOf(env.Lib), op.Name, env.Input)
	if errors.Is(err, errCut) || h.loseAnswer(op.Name) {
		return wsman.Result{Stderr: []byte("hypervsim: the connection broke"), ExitCode: 1}
	}
	out := map[string]any{"ok": err == nil}
	if err != nil {
		kind := wire.KindFailed
		var e *opError
		if errors.As(err, &e) {
			kind = e.kind
		}
		out["error"] = map[string]string{"kind": kind, "message": err.Error()}
	} else {
		out["result"] = result
	}
	doc, _ := json.Marshal(out)
	code := 0
	if err != nil {
		code = 1
	}
	line := wire.ResultLine(env.Nonce, doc)
	if env.Nonce == "" { // a release before operation nonces
		line = wire.ResultPrefix + base64.StdEncoding.EncodeToString(doc)
	}
	return wsman.Result{Stdout: []byte(line + "\r\n"), ExitCode: code}
}

// apply decodes an operation's input and runs it on the model.
func (h *Host) apply(name string, input json.RawMessage) (any, error) {
	decode := func(v any) error {
		if err := json.Unmarshal(input, v); err != nil {
			return fail(wire.KindFailed, "input of %s: %v", name, err)
		}
		return nil
	}
	if name == "guestlogs" { // runs in the guest, without the host's lock
		var in wire.GuestLogsInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.guestLogs(in)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.settle()
	switch name {
	case "host":
		var in wire.Placement
		if err := decode(&in); err != nil {
			return nil, err
		}
		info := h.info()
		if in.Cluster != "" {
			if err := h.assertCluster(in.Cluster); err != nil {
				return nil, err
			}
			info.Cluster = h.cluster.Name
		}
		return info, nil
	case "find":
		var in wire.VMKey
		if err := decode(&in); err != nil {
			return nil, err
		}
		if vm := h.find(in); vm != nil {
			return wire.Found{Found: true, VM: view(vm)}, nil
		}
		return wire.Found{}, nil
	case "peek":
		var in wire.PeekInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.peek(in), nil
	case "create":
		var in wire.CreateInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.create(in)
	case "power":
		var in wire.PowerInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.power(in)
	case "job":
		var in wire.JobRef
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.jobState(in), nil
	case "remove":
		var in wire.VMKey
		if err := decode(&in); err != nil {
			return nil, err
		}
		if err := h.remove(in); err != nil {
			return nil, err
		}
		return map[string]bool{"removed": true}, nil
	case "eject":
		var in wire.VMKey
		if err := decode(&in); err != nil {
			return nil, err
		}
		h.eject(in)
		return map[string]bool{"ejected": true}, nil
	case "locate":
		var in wire.VMKey
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.locate(in)
	case "parent":
		var in wire.ParentInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.parent(in)
	case "guest":
		var in wire.GuestInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return h.guestRun(in)
	}
	return nil, fail(wire.KindFailed, "operation %s is not simulated", name)
}

// CheckScripts parses all of capwin's host scripts now (one parser run), so the first operations
// a test sends do not wait for it.
func CheckScripts() error {
	var texts []string
	for _, s := range wire.Scripts() {
		texts = append(texts, s.Text)
	}
	return parses(texts...)
}

var (
	hashesOnce sync.Once
	hashes     map[string]wire.Script
	parsedMu   sync.Mutex
	parsed     = map[string]error{}
)

func byHash() map[string]wire.Script {
	hashesOnce.Do(func() {
		hashes = map[string]wire.Script{}
		for _, s := range wire.Scripts() {
			hashes[s.Hash()] = s
		}
	})
	return hashes
}

// scriptByHash is this tree's script of that hash, else an accepted release's.
func scriptByHash(hash string) (wire.Script, bool) {
	if s, ok := byHash()[hash]; ok {
		return s, true
	}
	acceptedMu.Lock()
	defer acceptedMu.Unlock()
	s, ok := accepted.ops[hash]
	return s, ok
}

// accepted are the scripts of other capwin releases the hosts run too (AcceptScripts).
var (
	acceptedMu sync.Mutex
	accepted   struct {
		runners map[string]bool
		libs    map[string]*Release    // by library text
		ops     map[string]wire.Script // by hash
	}
)

// Release is another capwin release's static scripts, for an upgrade test: the hosts run them
// besides this tree's.
type Release struct {
	// Scripts maps a file name without .ps1 (runner, common, host, create, ...) to its text. An
	// operation is dispatched by its name, as this tree's, on the input it sends.
	Scripts map[string]string
	// Input, when set, rewrites an operation's input into what this tree's handler of the same
	// name needs to do what that release's script did (a setting the script hard-coded).
	Input func(op string, input json.RawMessage) (json.RawMessage, error)
	// Result, when set, rewrites a result as this tree's handlers make it into the shape that
	// release's library wrote.
	Result func(result any) (any, error)
}

// AcceptScripts makes every simulated host also run the scripts of release r.
func AcceptScripts(r Release) {
	acceptedMu.Lock()
	defer acceptedMu.Unlock()
	if accepted.ops == nil {
		accepted.runners, accepted.libs, accepted.ops = map[string]bool{}, map[string]*Release{}, map[string]wire.Script{}
	}
	for name, text := range r.Scripts {
		switch name {
		case wire.Runner.Name:
			accepted.runners[wire.RunnerCommandFor(text)] = true
		case wire.Common.Name:
			accepted.libs[text] = &r
		default:
			s := wire.Script{Name: name, Text: text}
			accepted.ops[s.Hash()] = s
		}
	}
}

// applyAs runs an operation as release rel's script of that name did (nil: this tree's).
func (h *Host) applyAs(rel *Release, op string, input json.RawMessage) (any, error) {
	if rel != nil && rel.Input != nil {
		var err error
		if input, err = rel.Input(op, input); err != nil {
			return nil, err
		}
	}
	result, err := h.apply(op, input)
	if err == nil && rel != nil && rel.Result != nil {
		result, err = rel.Result(result)
	}
	return result, err
}

// releaseOf is the accepted release whose library lib is (nil: this tree's).
func releaseOf(lib string) *Release {
	acceptedMu.Lock()
	defer acceptedMu.Unlock()
	return accepted.libs[lib]
}

func runnerCommand(command string) bool {
	acceptedMu.Lock()
	defer acceptedMu.Unlock()
	return command == wire.RunnerCommand || accepted.runners[command]
}

func library(text string) bool {
	return text == wire.Common.Text || releaseOf(text) != nil
}

// parses checks texts with the PowerShell grammar, once per distinct text (all of capwin's
// scripts in one parser run the first time).
func parses(texts ...string) error {
	parsedMu.Lock()
	defer parsedMu.Unlock()
	if len(parsed) == 0 {
		var all []string
		for _, s := range wire.Scripts() {
			all = append(all, s.Text)
		}
		check(all)
	}
	var missing []string
	for _, t := range texts {
		if _, ok := parsed[wire.HashText(t)]; !ok {
			missing = append(missing, t)
		}
	}
	check(missing)
	for _, t := range texts {
		if err := parsed[wire.HashText(t)]; err != nil {
			return err
		}
	}
	return nil
}

// check parses texts and records the outcome of each (callers hold parsedMu).
func check(texts []string) {
	if len(texts) == 0 {
		return
	}
	dir, err := os.MkdirTemp("", "hypervsim-")
	if err == nil {
		defer func() { _ = os.RemoveAll(dir) }() // best effort: a temporary directory
	}
	paths := make([]string, len(texts))
	for i, t := range texts {
		paths[i] = filepath.Join(dir, fmt.Sprintf("s%d.ps1", i))
		if err == nil {
			err = os.WriteFile(paths[i], []byte(t), 0o600)
		}
	}
	var results []pscheck.Result
	if err == nil {
		results, err = pscheck.Files(paths...)
	}
	for i, t := range texts {
		switch {
		case err != nil:
			parsed[wire.HashText(t)] = fmt.Errorf("cannot check PowerShell syntax: %w", err)
		case i < len(results) && len(results[i].Errors) > 0:
			parsed[wire.HashText(t)] = fmt.Errorf("script does not parse: %s", results[i].String())
		default:
			parsed[wire.HashText(t)] = nil
		}
	}
}

func (h *Host) loseAnswer(op string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lose[op] > 0 {
		h.lose[op]--
		return true
	}
	return false
}
