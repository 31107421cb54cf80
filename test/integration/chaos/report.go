package chaos

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Print writes Markdown(reports) to w.
func Print(w io.Writer, reports []*Report) error {
	_, err := io.WriteString(w, Markdown(reports))
	return err
}

// Markdown puts the reports side by side in a Markdown table, then lists each report's
// violations.
func Markdown(reports []*Report) string {
	b := new(strings.Builder)
	row := func(name string, cell func(r *Report) string) {
		cells := []string{name}
		for _, r := range reports {
			cells = append(cells, cell(r))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	row("", func(r *Report) string { return r.Provider })
	row("---", func(*Report) string { return "---" })
	var kinds []string
	for _, r := range reports {
		for k := range r.Faults {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		row(k, func(r *Report) string { return fmt.Sprint(r.Faults[k]) })
	}
	row("manager restarts", func(r *Report) string { return fmt.Sprint(r.Restarts) })
	row("machines Ready on the new image", func(r *Report) string { return fmt.Sprintf("%d/%d", r.Ready, r.Machines) })
	row("owners with duplicate VMs (sampled every 2 s)", func(r *Report) string { return fmt.Sprint(len(r.Duplicates)) })
	row("VMs, DRS rules and VM groups, tag attachments, IP claims, tokens left after delete", func(r *Report) string {
		return fmt.Sprintf("%d, %d, %d, %d, %d", r.LeakedVMs, r.LeakedRules, r.LeakedTags, r.LeakedClaims, r.LeakedTokens)
	})
	row("changing calls to decoy VMs", func(r *Report) string { return fmt.Sprint(r.DecoyChanges) })
	row("decoys left as they were", func(r *Report) string { return yes(r.DecoysLeft) })
	row("machine pointing at a decoy", func(r *Report) string { return strings.SplitN(r.Hostile, ":", 2)[0] })
	row("cluster with a refused credential", func(r *Report) string { return strings.SplitN(r.BadCluster, ":", 2)[0] })
	row("refused logins of the bad credential (bound)", func(r *Report) string {
		return fmt.Sprintf("%d (%d)", r.RefusedLogins, r.RefusedBound)
	})
	row("last fault to converged", func(r *Report) string { return round(r.Converged) })
	row("Machine created to Ready p50 / max", func(r *Report) string { return round(r.ToReadyP50) + " / " + round(r.ToReadyMax) })
	row("delete of both Clusters", func(r *Report) string { return round(r.Delete) })
	row("credentials searched in logs, events, objects, metrics (none may be found)", func(r *Report) string { return fmt.Sprint(r.Credentials) })
	row("invariants", func(r *Report) string {
		if len(r.Violations) == 0 {
			return "all hold"
		}
		return fmt.Sprintf("%d broken", len(r.Violations))
	})
	for _, r := range reports {
		for _, v := range r.Violations {
			fmt.Fprintf(b, "\n%s: %s\n", r.Provider, v)
		}
	}
	return b.String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func round(d time.Duration) string { return d.Round(time.Second).String() }
