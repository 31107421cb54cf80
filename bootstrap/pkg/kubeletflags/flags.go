package kubeletflags

import (
	"fmt"
	"strings"
)

// Minors are the Kubernetes minor versions with a flag set, oldest first ("v1.31").
func Minors() []string {
	out := make([]string, 0, len(minors))
	for _, m := range minors {
		out = append(out, minorName(m))
	}
	return out
}

// Range names the minors with a flag set, for messages: "v1.31 to v1.37".
func Range() string { return span(minors) }

// Supported reports whether there is a flag set for the minor of a Kubernetes version (v1.36.3).
func Supported(version string) bool {
	minor, ok := parseMinor(version)
	_, has := sets[minor]
	return ok && has
}

// Has reports whether the kubelet of a Kubernetes version (v1.36.3, or its minor v1.36) has a
// flag (its name without dashes); false when the minor has no set.
func Has(version, name string) bool {
	minor, ok := parseMinor(version)
	return ok && sets[minor].has(name)
}

// Known reports whether the kubelet of any supported minor has the flag.
func Known(name string) bool { return len(with(name)) > 0 }

// Refusal says why the kubelet of a Kubernetes version would not start with a flag (its name
// without dashes), with what to set instead where capwin knows; empty when that kubelet has the
// flag or when the version's minor has no set (nothing is known about it).
func Refusal(version, name string) string {
	minor, ok := parseMinor(version)
	if !ok || sets[minor] == nil || sets[minor].has(name) {
		return ""
	}
	msg := fmt.Sprintf("the %s kubelet has no flag --%s", minorName(minor), name)
	return msg + history(name, minor) + hint(name)
}

// Warnings are what an operator should know about a flag some supported kubelets have: that
// others lack it (their Machines get no bootstrap data), and the kubelet's deprecation message.
func Warnings(name string) []string {
	have := with(name)
	if len(have) == 0 {
		return nil
	}
	var out []string
	if missing := without(name); len(missing) > 0 {
		out = append(out, fmt.Sprintf("%s %s no flag --%s, so a Machine of such a version gets no bootstrap data (DataSecretAvailable False, reason KubeletFlagNotSupported)%s",
			kubelets(missing), hasOrHave(missing), name, hint(name)))
	}
	if deprecatedIn, message := deprecation(name); len(deprecatedIn) > 0 {
		out = append(out, fmt.Sprintf("--%s is deprecated in %s: %q", name, kubelets(deprecatedIn), message))
	}
	return out
}

// has reports whether the set holds the flag, named as the kubelet's word-separator
// normalization does (pod_infra_container_image is pod-infra-container-image).
func (s flagSet) has(name string) bool {
	_, ok := s[normalize(name)]
	return ok
}

func normalize(name string) string { return strings.ReplaceAll(name, "_", "-") }

// with and without are the minors whose kubelet has, or lacks, the flag, oldest first.
func with(name string) []int    { return minorsWhere(func(s flagSet) bool { return s.has(name) }) }
func without(name string) []int { return minorsWhere(func(s flagSet) bool { return !s.has(name) }) }

func minorsWhere(keep func(flagSet) bool) []int {
	var out []int
	for _, m := range minors {
		if keep(sets[m]) {
			out = append(out, m)
		}
	}
	return out
}

// deprecation is the minors whose kubelet marks the flag deprecated and the newest one's message.
func deprecation(name string) ([]int, string) {
	var in []int
	var message string
	for _, m := range minors {
		if d := sets[m][normalize(name)]; d != "" {
			in, message = append(in, m), d
		}
	}
	return in, message
}

// history says which other kubelet had the flag: the last before minor, else the first after it,
// else that no supported kubelet has it.
func history(name string, minor int) string {
	have := with(name)
	last, first := 0, 0
	for _, m := range have {
		if m < minor {
			last = m
		} else if first == 0 {
			first = m
		}
	}
	switch {
	case last != 0:
		return fmt.Sprintf(" (the %s kubelet had it)", minorName(last))
	case first != 0:
		return fmt.Sprintf(" (the %s kubelet is the first with it)", minorName(first))
	}
	return fmt.Sprintf(" (no kubelet %s has it)", Range())
}

// kubelets names minors for a message: "the v1.35 to v1.37 kubelets", "the v1.31 kubelet".
func kubelets(ms []int) string {
	if len(ms) == 1 {
		return "the " + minorName(ms[0]) + " kubelet"
	}
	return "the " + span(ms) + " kubelets"
}

func hasOrHave(ms []int) string {
	if len(ms) == 1 {
		return "has"
	}
	return "have"
}

// span names minors as ranges of consecutive ones: "v1.31 to v1.34, v1.36".
func span(ms []int) string {
	var parts []string
	for i := 0; i < len(ms); {
		j := i
		for j+1 < len(ms) && ms[j+1] == ms[j]+1 {
			j++
		}
		part := minorName(ms[i])
		if j > i {
			part += " to " + minorName(ms[j])
		}
		parts = append(parts, part)
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
