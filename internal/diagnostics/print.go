package diagnostics

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Write prints the story, with at most maxEvents of the latest events.
func Write(w io.Writer, s *Story, maxEvents int) error {
	p := &printer{w: w}
	m := s.Machine
	p.section("Machine %s/%s (Cluster %s)", m.Namespace, m.Name, m.Spec.ClusterName)
	p.field("Phase", m.Status.Phase)
	p.field("Version", m.Spec.Version)
	p.field("Provider ID", m.Spec.ProviderID)
	p.field("Node ref", m.Status.NodeRef.Name)
	p.conditions(m.Status.Conditions)

	p.section("%s %s/%s", s.InfraKind, m.Namespace, s.InfraName)
	if s.Infra == nil {
		p.line("  not found, or not a capwin kind")
	} else {
		st := s.Infra.GetMachineStatus()
		p.field("State", fmt.Sprintf("%s (since %s)", st.Provisioning.State, stamp(st.Provisioning.Since.Time)))
		p.field("VM", st.VM.ID)
		p.field("Host", st.VM.Host)
		p.field("Instance UUID", st.VM.InstanceUUID)
		p.field("Provider ID", *s.Infra.GetProviderID())
		p.field("Computer name", st.ComputerName)
		p.field("Addresses", addresses(st.Addresses))
		p.field("Task", st.Task)
		p.conditions(s.Infra.GetConditions())

		p.section("Bootstrap (the guest's last report)")
		if st.Bootstrap.State == "" {
			p.line("  no report yet")
		} else {
			p.field("Step", st.Bootstrap.Step)
			p.field("State", st.Bootstrap.State)
			p.field("Message", st.Bootstrap.Message)
			if st.Bootstrap.LogTail != "" {
				p.line("  Log tail:")
				for _, l := range strings.Split(strings.TrimRight(st.Bootstrap.LogTail, "\n"), "\n") {
					p.line("    " + l)
				}
			}
		}
	}

	if s.Config != nil {
		p.section("WindowsConfig %s/%s", s.Config.Namespace, s.Config.Name)
		p.field("Data secret", s.Config.Status.DataSecretName)
		p.conditions(s.Config.Status.Conditions)
	}

	p.section("Node")
	if n := s.Workload.Node; n != nil {
		p.node(n)
	} else {
		p.line("  no Node yet: " + WhyNoNode(s))
	}

	p.section("Events (latest %d)", maxEvents)
	p.events(append(s.Events, s.Workload.Events...), maxEvents)

	p.section("Remediation")
	if _, ok := m.Annotations[clusterv1.MachineSkipRemediationAnnotation]; ok {
		p.line("  MachineHealthCheck remediation is skipped for this Machine (annotation " + clusterv1.MachineSkipRemediationAnnotation + ").")
		p.line(fmt.Sprintf("  Remove it when done: kubectl annotate machine -n %s %s %s-", m.Namespace, m.Name, clusterv1.MachineSkipRemediationAnnotation))
	} else {
		p.line("  A MachineHealthCheck may replace this Machine (and delete its VM). To keep the VM for inspection:")
		p.line(fmt.Sprintf("  kubectl annotate machine -n %s %s %s=\"\"", m.Namespace, m.Name, clusterv1.MachineSkipRemediationAnnotation))
	}
	return p.err
}

// printer writes lines and remembers the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(s string) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, s)
	}
}

func (p *printer) section(format string, args ...any) {
	p.line("")
	p.line(fmt.Sprintf(format, args...))
}

// field prints "  Name: value", "-" for an empty value.
func (p *printer) field(name, value string) {
	if value == "" {
		value = "-"
	}
	p.line(fmt.Sprintf("  %-14s %s", name+":", value))
}

func (p *printer) conditions(conds []metav1.Condition) {
	if len(conds) == 0 {
		p.line("  Conditions: none")
		return
	}
	p.line("  Conditions:")
	p.table(func(tw *bytes.Buffer) {
		for _, c := range conds {
			row := fmt.Sprintf("    %s\t%s\t%s\t%s", c.Type, c.Status, c.Reason, stamp(c.LastTransitionTime.Time))
			if msg := firstLine(c.Message); msg != "" {
				row += "\t" + msg
			}
			fmt.Fprintln(tw, row)
		}
	})
}

func (p *printer) node(n *corev1.Node) {
	ready := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = fmt.Sprintf("%s (%s since %s) %s", c.Status, c.Reason, stamp(c.LastTransitionTime.Time), c.Message)
		}
	}
	p.field("Name", n.Name)
	p.field("Ready", strings.TrimSpace(ready))
	p.field("Kubelet", n.Status.NodeInfo.KubeletVersion)
	p.field("OS image", n.Status.NodeInfo.OSImage)
	p.field("Windows build", n.Labels[corev1.LabelWindowsBuild])
	p.field("Provider ID", n.Spec.ProviderID)
	var taints []string
	for _, t := range n.Spec.Taints {
		taints = append(taints, t.ToString())
	}
	p.field("Taints", strings.Join(taints, ", "))
}

func (p *printer) events(events []Event, maxEvents int) {
	if len(events) == 0 {
		p.line("  none")
		return
	}
	events = events[max(0, len(events)-maxEvents):]
	p.table(func(tw *bytes.Buffer) {
		for _, e := range events {
			count := ""
			if e.Count > 1 {
				count = fmt.Sprintf(" (x%d)", e.Count)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s%s\n", stamp(e.Time), e.Type, e.Reason, e.Object, firstLine(e.Message), count)
		}
	})
}

// table writes aligned columns.
func (p *printer) table(rows func(*bytes.Buffer)) {
	if p.err != nil {
		return
	}
	var b bytes.Buffer
	rows(&b)
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if _, p.err = tw.Write(b.Bytes()); p.err == nil {
		p.err = tw.Flush()
	}
}

func addresses(addrs []clusterv1.MachineAddress) string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = string(a.Type) + " " + a.Address
	}
	return strings.Join(out, ", ")
}

// firstLine is a message's first line, marked when more follows.
func firstLine(s string) string {
	first, rest, found := strings.Cut(strings.TrimSpace(s), "\n")
	if found && strings.TrimSpace(rest) != "" {
		return first + " [...]"
	}
	return first
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
