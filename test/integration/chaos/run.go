package chaos

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/harness"
)

// Workers is the MachineDeployment the soak rolls out.
const Workers = "chaos"

// Run runs one soak and returns its report; an error means the soak itself could not run.
func Run(ctx context.Context, c Config, p harness.Progress) (*Report, error) {
	if c.Converge == 0 {
		c.Converge = 15 * time.Minute
	}
	vf := newVSphereFaults(c.Rates, c.Seed)
	infra := infrasetup.Options{PollInterval: time.Second, TaskPollInterval: 200 * time.Millisecond,
		Sessions: &session.Sessions{WrapTransport: vf.wrap},
		// A hung host holds an operation for seconds, not the production minutes.
		Conns: &hyperv.Conns{Deadlines: hyperv.Deadlines{Short: 5 * time.Second, Long: 20 * time.Second}}}
	h, err := harness.Start(ctx, harness.Options{Provider: c.Provider, Log: c.Log, Heartbeat: 5 * time.Second,
		JoinTimeout: 2 * time.Minute, Infrastructure: infra})
	if err != nil {
		return nil, err
	}
	defer func() { _ = h.Stop() }()
	r := &Report{Provider: c.Provider, Machines: c.Machines, Faults: map[string]int64{}}
	s := &soak{c: c, h: h, p: p, r: r, vf: vf}
	if err := s.prepare(ctx); err != nil {
		return nil, err
	}
	if err := s.faults(ctx); err != nil {
		return nil, err
	}
	lastFault := time.Now()
	if err := s.converge(ctx); err != nil {
		return nil, err
	}
	r.Converged = time.Since(lastFault)
	if err := s.delete(ctx); err != nil {
		return nil, err
	}
	s.check()
	var logs []string
	if c.ControllersLog != "" {
		logs = append(logs, c.ControllersLog)
	}
	names, err := h.ScanSecrets(ctx, logs...)
	r.Credentials = len(names)
	if err != nil {
		r.Violations = append(r.Violations, err.Error())
	}
	return r, nil
}

// soak is one run in progress.
type soak struct {
	c  Config
	h  *harness.Harness
	p  harness.Progress
	r  *Report
	vf *vsphereFaults
	w  *watch
	d  *decoys
}

// prepare creates the Cluster, the decoys, the bad-credential Cluster and the workers, and starts
// watching.
func (s *soak) prepare(ctx context.Context) error {
	s.p("%s: cluster, decoys, a cluster with a refused credential, %d workers", s.c.Provider, s.c.Machines)
	if err := s.h.CreateCluster(ctx); err != nil {
		return err
	}
	var err error
	if s.d, err = newDecoys(ctx, s.h, s.vf); err != nil {
		return fmt.Errorf("decoys: %w", err)
	}
	if err := s.d.badCluster(ctx); err != nil {
		return fmt.Errorf("bad-credential cluster: %w", err)
	}
	n := int32(s.c.Machines) //nolint:gosec // G115: a machine count, far below 2^31
	fd := ""
	if s.c.Provider != harness.HyperV {
		fd = harness.FailureDomain // a VM group and a VM-Host rule to leave behind, or not
	}
	if err := s.h.CreateWorkers(ctx, harness.Workers{Name: Workers, Image: "ltsc2022", Replicas: n, MaxSurge: max(1, n/10), Machine: spread, FailureDomain: fd}); err != nil {
		return err
	}
	if err := s.d.hostileMachine(ctx, Workers+"-ltsc2022"); err != nil {
		return fmt.Errorf("hostile machine: %w", err)
	}
	s.w = startWatch(ctx, s.h)
	return nil
}

// faults runs the fault window: the rollout to 2025 starts halfway, manager restarts are spread
// over it.
func (s *soak) faults(ctx context.Context) error {
	s.p("%s: faults for %s (rollout at half, %d manager restarts, %d hypervisor endpoint restarts)", s.c.Provider,
		s.c.Duration, s.c.Restarts, s.c.SimRestarts)
	ctx, cancel := context.WithTimeout(ctx, s.c.Duration)
	defer cancel()
	s.vf.on.Store(true)
	defer s.vf.on.Store(false)
	hf := newHyperVFaults(s.c.Rates, s.c.Seed, s.h.HyperV)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.c.Provider == harness.HyperV {
			hf.run(ctx, s.c.Duration)
		}
	}()
	begin, rolled, restarts := time.Now(), false, 0
	sims := s.startSimRestarts(ctx, begin)
	for ctx.Err() == nil {
		elapsed := time.Since(begin)
		if !rolled && elapsed >= s.c.Duration/2 {
			s.p("  rollout to ltsc2025")
			if err := s.h.SetWorkersImage(context.WithoutCancel(ctx), Workers, "ltsc2025"); err != nil {
				return err
			}
			rolled = true
		}
		if restarts < s.c.Restarts && elapsed >= s.c.Duration*time.Duration(restarts+1)/time.Duration(s.c.Restarts+1) {
			s.p("  restarting the managers")
			if err := s.h.Management.RestartManager(context.WithoutCancel(ctx)); err != nil {
				return err
			}
			restarts++
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	<-done
	simKind, simRestarts := sims.wait()
	if !rolled {
		if err := s.h.SetWorkersImage(context.WithoutCancel(ctx), Workers, "ltsc2025"); err != nil {
			return err
		}
	}
	s.r.Restarts = restarts
	for k, v := range map[string]int64{
		"vSphere calls delayed": s.vf.delayed.Load(), "vSphere calls dropped": s.vf.dropped.Load(),
		"vSphere answers lost": s.vf.lost.Load(), "vSphere sessions expired": s.vf.expired.Load(),
		"vSphere clone tasks failed": s.vf.failed.Load(),
		"Hyper-V answers lost":       hf.lost.Load(), "Hyper-V slow-job spells": hf.delayed.Load(),
		"Hyper-V hosts hung": hf.hangs.Load(), "Hyper-V disks full": hf.diskFull.Load(),
		simKind: simRestarts,
	} {
		if v > 0 {
			s.r.Faults[k] = v
		}
	}
	return nil
}

// spread gives the vCenter workers a Hard anti-affinity rule and the harness's vSphere tags, so
// the soak's delete counts the rules and tag attachments capwin leaves behind (vcsim keeps rules
// but does not enforce them).
func spread(obj client.Object) {
	if t, ok := obj.(*infrav1.VCenterMachineTemplate); ok {
		t.Spec.Template.Spec.AntiAffinity = &infrav1.VCenterAntiAffinity{Mode: infrav1.AntiAffinityHard}
		t.Spec.Template.Spec.Tags = harness.VSphereTags
	}
}
