package preflight

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the report for a person: a summary, then each workload with its findings.
func Write(w io.Writer, r Report) error {
	var b strings.Builder
	classes := "none"
	if len(r.HyperVClasses) > 0 {
		classes = strings.Join(r.HyperVClasses, ", ")
	}
	fmt.Fprintf(&b, "Windows workloads against %s: %d Pod templates, %d containers checked; RuntimeClasses with Hyper-V isolation: %s\n",
		r.Target, r.Workloads, r.Containers, classes)
	blocking, unchecked := r.Blocking()
	if blocking+unchecked == 0 {
		fmt.Fprintf(&b, "All of them start on %s.\n", r.Target)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s:\n", Summary(blocking, unchecked))
	last := ""
	for _, f := range r.Findings {
		if f.Workload.String() != last {
			fmt.Fprintf(&b, "\n%s\n", f.Workload)
			last = f.Workload.String()
		}
		if f.Container != "" {
			builds := "none"
			if len(f.Builds) > 0 {
				builds = strings.Join(f.Builds, ", ")
			}
			if f.Unchecked {
				builds = "unknown"
			}
			fmt.Fprintf(&b, "  container %s, image %s (Windows builds: %s)\n", f.Container, f.Image, builds)
		}
		fmt.Fprintf(&b, "    problem: %s\n    fix: %s\n", f.Problem, f.Fix)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary counts the findings in words: "2 findings keep Pods from starting, 1 image could not be read".
func Summary(blocking, unchecked int) string {
	s := fmt.Sprintf("%d finding%s keep%s Pods from starting", blocking, plural(blocking), map[bool]string{true: "s"}[blocking == 1])
	if unchecked > 0 {
		s += fmt.Sprintf(", %d image%s could not be read", unchecked, plural(unchecked))
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
