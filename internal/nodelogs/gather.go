// Package nodelogs gathers what an operator needs to diagnose Windows nodes into one archive,
// from the management cluster: for each Machine its story (render diagnostics: the Machine, its
// VCenterMachine or HyperVMachine, the bootstrap report with its log tail, the WindowsConfig,
// events) and, when its Node is up, the node's logs through Node Log Query: capwin's bootstrap
// log, the kubelet's (rotated files too), containerd's, and the kube-proxy and CNI addons' pod logs.
package nodelogs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/internal/diagnostics"
)

// Kinds of Target.
const (
	Machine           = "Machine"
	MachineDeployment = "MachineDeployment"
	Cluster           = "Cluster"
)

// Target is what to gather: a Machine (or its VCenterMachine or HyperVMachine), every Machine of
// a MachineDeployment, or every Machine of a Cluster.
type Target struct {
	Kind, Namespace, Name string
}

// Options of Gather.
type Options struct {
	// Events is how many of the latest events each story prints (default 20).
	Events int
	// MaxFileBytes is how much of the end of each log file is kept (default 16 MiB).
	MaxFileBytes int64
	// Now stamps the archive's files (default time.Now).
	Now func() time.Time
	// Guest says when the logs are also collected through the hypervisor's guest channel by the
	// infrastructure manager (GuestAuto, the default; GuestAlways; GuestNever).
	Guest string
	// GuestCredentials names a Secret of the Machines' namespace with a guest administrator's
	// username and password; "" uses each machine's spec.guestCredentialsRef.
	GuestCredentials string
	// GuestTimeout bounds the wait for the managers' answers (default 5m); GuestPoll is how often
	// they are read (default 2s).
	GuestTimeout, GuestPoll time.Duration
}

// Result is what the archive holds, machine by machine.
type Result struct {
	Machines []MachineResult
}

// MachineResult is one Machine's part of the archive.
type MachineResult struct {
	Name string
	// Node is the Machine's Node ("" when it has none).
	Node string
	// Files are the archive's files of the Machine.
	Files []string
	// Notes say what could not be gathered and why.
	Notes []string
}

// Summary is one line: the Machine, its Node ("no Node") and how many files it has.
func (m MachineResult) Summary() string {
	node := m.Node
	if node == "" {
		node = "no Node"
	}
	return fmt.Sprintf("%s (%s): %d files", m.Name, node, len(m.Files))
}

// Gather writes the archive of t to w (a .tar.gz): <machine>/story.txt, <machine>/node.yaml,
// <machine>/node/<path under C:\var\log>, <machine>/notes.txt, and README.txt.
func Gather(ctx context.Context, c client.Client, t Target, opts Options, w io.Writer) (*Result, error) {
	if opts.Events <= 0 {
		opts.Events = 20
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = 16 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Guest == "" {
		opts.Guest = GuestAuto
	}
	if opts.GuestTimeout <= 0 {
		opts.GuestTimeout = 5 * time.Minute
	}
	if opts.GuestPoll <= 0 {
		opts.GuestPoll = 2 * time.Second
	}
	names, err := machines(ctx, c, t)
	if err != nil {
		return nil, err
	}
	a := newArchive(w, opts.Now())
	res := &Result{}
	workloads := map[string]kubernetes.Interface{}
	id := requestID(opts.Now())
	var requests []*guestRequest
	for i, name := range names {
		before := len(a.names)
		m := MachineResult{Name: name}
		story, nodeLogsRead := gatherMachine(ctx, c, t.Namespace, name, opts, a, workloads, &m)
		if story != nil && (opts.Guest == GuestAlways || (opts.Guest == GuestAuto && !nodeLogsRead)) {
			if r := requestGuest(ctx, c, story, id, opts.GuestCredentials, &m); r != nil {
				r.machine = i
				requests = append(requests, r)
			}
		}
		m.Files = append([]string(nil), a.names[before:]...)
		res.Machines = append(res.Machines, m)
	}
	deadline := time.Now().Add(opts.GuestTimeout)
	for _, r := range requests {
		m := &res.Machines[r.machine]
		before := len(a.names)
		zip, message, err := r.wait(ctx, c, deadline, opts.GuestPoll)
		switch {
		case err != nil:
			m.Notes = append(m.Notes, "no guest logs: "+err.Error())
		case zip == nil:
			m.Notes = append(m.Notes, "no guest logs: "+message)
		default:
			if err := addGuestZip(a, m.Name+"/guest/", zip, opts.MaxFileBytes); err != nil {
				m.Notes = append(m.Notes, "guest logs: "+err.Error())
			}
		}
		m.Files = append(m.Files, a.names[before:]...)
	}
	for i := range res.Machines {
		m := &res.Machines[i]
		if len(m.Notes) > 0 {
			_ = a.file(m.Name+"/notes.txt", []byte(strings.Join(m.Notes, "\n")+"\n"))
			m.Files = append(m.Files, m.Name+"/notes.txt")
		}
	}
	if err := a.file("README.txt", readme(t, res, opts.Now())); err != nil {
		return nil, err
	}
	return res, a.close()
}

// machines are the names of the Machines of t, sorted.
func machines(ctx context.Context, c client.Client, t Target) ([]string, error) {
	var label string
	switch t.Kind {
	case Machine:
		return []string{t.Name}, nil
	case MachineDeployment:
		label = clusterv1.MachineDeploymentNameLabel
	case Cluster:
		label = clusterv1.ClusterNameLabel
	default:
		return nil, fmt.Errorf("cannot gather the logs of a %q: give a Machine, a MachineDeployment or a Cluster", t.Kind)
	}
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(t.Namespace), client.MatchingLabels{label: t.Name}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("%s %s/%s has no Machines", t.Kind, t.Namespace, t.Name)
	}
	names := make([]string, 0, len(list.Items))
	for _, m := range list.Items {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names, nil
}

// gatherMachine adds one Machine's story and, if its Node is up, its node's logs. It returns the
// story (nil when it could not be read) and whether the node's logs were read.
func gatherMachine(ctx context.Context, c client.Client, namespace, name string, opts Options, a *archive,
	workloads map[string]kubernetes.Interface, m *MachineResult) (*diagnostics.Story, bool) {
	story, err := diagnostics.Collect(ctx, c, namespace, name)
	if err != nil {
		m.Notes = append(m.Notes, "story: "+err.Error())
		return nil, false
	}
	m.Name = story.Machine.Name
	var text bytes.Buffer
	if err := diagnostics.Write(&text, story, opts.Events); err != nil {
		m.Notes = append(m.Notes, "story: "+err.Error())
	}
	_ = a.file(m.Name+"/story.txt", text.Bytes())
	node := story.Workload.Node
	if node == nil {
		why := diagnostics.WhyNoNode(story)
		m.Notes = append(m.Notes, "no node logs: the Machine has no Node ("+why+"); story.txt has the bootstrap report and its log tail")
		return story, false
	}
	m.Node = node.Name
	if data, err := yaml.Marshal(node); err == nil {
		_ = a.file(m.Name+"/node.yaml", data)
	}
	cs, err := workloadClientset(ctx, c, namespace, story.Machine.Spec.ClusterName, workloads)
	if err != nil {
		m.Notes = append(m.Notes, "no node logs: "+err.Error())
		return story, false
	}
	n := nodeLogs{cs: cs, node: node.Name, max: opts.MaxFileBytes}
	return story, n.gather(ctx, a, m.Name+"/node/", node.Labels[corev1.LabelOSStable] == "windows", &m.Notes)
}

func workloadClientset(ctx context.Context, c client.Client, namespace, cluster string, cache map[string]kubernetes.Interface) (kubernetes.Interface, error) {
	if cs, ok := cache[cluster]; ok {
		return cs, nil
	}
	cfg, err := diagnostics.WorkloadConfig(ctx, c, namespace, cluster)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = time.Minute
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cache[cluster] = cs
	return cs, nil
}

func readme(t Target, res *Result, at time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "capwin node logs of %s %s/%s, gathered %s\n\n", t.Kind, t.Namespace, t.Name, at.UTC().Format(time.RFC3339))
	b.WriteString("Each Machine's folder has story.txt (what render diagnostics prints), node.yaml (its Node),\n" +
		"node/ (C:\\var\\log of the node through Node Log Query: capwin\\bootstrap.log, kubelet\\, containerd\\,\n" +
		"the addons' pod logs) and guest/ (collected in the guest through the hypervisor's guest channel:\n" +
		"files/ with the log folders and cloudbase-init's log, events/ with the System and Application event\n" +
		"logs, state/ with hnsdiag, services, adapters and volumes, collect.log); notes.txt says what could\n" +
		"not be gathered and why.\n\n")
	for _, m := range res.Machines {
		b.WriteString(m.Summary() + "\n")
	}
	return []byte(b.String())
}
