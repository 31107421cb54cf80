package guest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/guestos"
)

// Report states, as bootstrap.ps1 writes them.
const (
	StateRunning   = "Running"
	StateRebooting = "Rebooting"
	StateSucceeded = "Succeeded"
	StateFailed    = "Failed"
)

// Steps are bootstrap.ps1's steps, in its order.
var Steps = guestos.BootstrapSteps

// StepError is the error of a bootstrap step: Message is what the script reports, Err the
// underlying reason (for a failed kubeadm join, what kubeadm printed).
type StepError struct {
	Step, Message string
	Err           error
}

func (e *StepError) Error() string {
	if e.Err == nil || e.Err.Error() == e.Message {
		return fmt.Sprintf("bootstrap step %s failed: %s", e.Step, e.Message)
	}
	return fmt.Sprintf("bootstrap step %s failed: %s: %v", e.Step, e.Message, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// exitError is a native program that failed: the script reports only its exit code, the
// program's own output goes to the log.
type exitError struct {
	program string
	cause   error
}

func (e *exitError) Error() string { return e.program + " exited with code 1" }
func (e *exitError) Unwrap() error { return e.cause }

// rebootRequest is Request-Reboot: the step asks for a restart and the script runs again.
type rebootRequest struct{ reason string }

func (r *rebootRequest) Error() string { return "reboot: " + r.reason }

// script is bootstrap.ps1 on this guest. It outlives a simulated reboot: its state (features,
// the file system) is the machine's.
type script struct {
	g           *Guest
	doc         *userdata.Document
	unpacked    *userdata.Unpacked
	step        string
	features    map[string]bool // installed Windows features
	kubeletArgs []string        // the kubelet service's command line (registered by the kubelet step)
	domain      string          // the Active Directory domain the computer is a member of
	// running are the services running now, by name, with their program (imageServices at boot).
	running map[string]string
	// cut is whether Faults.RestartDuring has cut the power once.
	cut bool
}

// bootstrap is cloudbase-init handing the user data over, and the script run(s) after it.
func (g *Guest) bootstrap(ctx context.Context) error {
	u, err := userdata.Unpack(g.cfg.UserData)
	if err != nil {
		return fmt.Errorf("cloudbase-init: %w", err) // nothing runs, nothing is reported
	}
	if c, ok := userdata.DecodeImageCheck(u.Data); ok {
		return g.imageCheck(ctx, c)
	}
	doc, err := userdata.DecodeDocument(u.Data)
	if err != nil {
		return fmt.Errorf("bootstrap.ps1 cannot read its data: %w", err)
	}
	g.setNodeName(plannedNodeName(g.cfg.Hostname, doc))
	// image-builder's Windows images come with the Containers feature (and containerd, kubelet
	// and kubeadm) installed.
	s := &script{g: g, doc: doc, unpacked: u, features: map[string]bool{"containers": true}}
	for {
		if doc.Mode == userdata.ModeCloudbaseInit {
			if err := s.cloudConfig(); err != nil {
				return fmt.Errorf("cloudbase-init: %w", err)
			}
		}
		s.running = imageServices()
		err := s.run(ctx)
		var reboot *rebootRequest
		var cut *powerCut
		if errors.As(err, &cut) {
			g.cfg.Log.V(1).Info("guest restarts in the middle of a step", "step", cut.step)
			continue
		}
		if !errors.As(err, &reboot) {
			return err
		}
		// The guest restarts; cloudbase-init (exit code 1003) or the startup task of standalone
		// mode runs the script again, which skips the steps it has recorded as done.
		g.cfg.Log.V(1).Info("guest reboots", "reason", reboot.reason)
	}
}

// run is one execution of the script's main block.
func (s *script) run(ctx context.Context) error {
	for _, name := range Steps {
		s.step = name
		if name != "preflight" && s.isDone(name) {
			continue
		}
		s.log("starting")
		s.send(ctx, name, StateRunning, "")
		err := s.g.takeTime(ctx)
		if err == nil {
			err = s.do(ctx, name)
		}
		if err != nil {
			var cut *powerCut
			if ctx.Err() != nil || errors.As(err, &cut) {
				return err // powered off mid-step: nothing more is reported
			}
			var reboot *rebootRequest
			if errors.As(err, &reboot) {
				s.log("rebooting: " + reboot.reason + "; the bootstrap continues after the reboot")
				s.send(ctx, name, StateRebooting, reboot.reason)
				if s.doc.Mode != userdata.ModeCloudbaseInit {
					// Standalone mode keeps a copy of itself for the startup task; finish removes it.
					s.g.fs.write(s.doc.Paths.StateDir+`\bootstrap.ps1`, s.unpacked.Script)
				}
				return err
			}
			s.log("failed: " + err.Error())
			s.send(ctx, name, StateFailed, err.Error())
			return &StepError{Step: name, Message: err.Error(), Err: errors.Unwrap(err)}
		}
		s.setDone(name)
	}
	s.step = "finish"
	s.log("the node has joined the cluster")
	s.send(ctx, "finish", StateSucceeded, "the node has joined the cluster")
	return nil
}

func (s *script) isDone(name string) bool {
	data, _ := s.g.fs.read(s.doneFile())
	for _, line := range strings.Split(string(data), "\r\n") {
		if line == name {
			return true
		}
	}
	return false
}

func (s *script) setDone(name string) { s.g.fs.appendTo(s.doneFile(), []byte(name+"\r\n")) }

func (s *script) doneFile() string { return s.doc.Paths.StateDir + `\steps.done` }

// log is Write-Log: a timestamped line in the bootstrap log (which the status reports' logTail
// shows) and on the console.
func (s *script) log(msg string) {
	line := fmt.Sprintf("%s [%s] %s", time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z"), s.step, msg)
	s.g.fs.appendTo(s.doc.Paths.LogFile, []byte(line+"\r\n"))
	s.g.cfg.Log.V(2).Info(line)
}

// send is Send-Status.
func (s *script) send(ctx context.Context, step, state, message string) {
	logData, _ := s.g.fs.read(s.doc.Paths.LogFile)
	r, data := newReport(step, state, message, string(logData), s.doc.Status.MaxBytes)
	r.At = time.Now()
	s.g.mu.Lock()
	s.g.reports = append(s.g.reports, r)
	s.g.mu.Unlock()
	if s.g.cfg.Channel == nil {
		return
	}
	if err := s.g.cfg.Channel.Status(ctx, s.doc.Status, data); err != nil && ctx.Err() == nil {
		s.g.cfg.Log.Info("status report failed", "err", err.Error())
	}
}
