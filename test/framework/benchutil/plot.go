package benchutil

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// WritePlots writes <bench>-<mode>-<what>.png into dir: wall time, hypervisor calls, API requests and
// CPU milliseconds per VM, each against the machine count, one line per phase.
func WritePlots(dir string, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r0 := runs[0]
	for _, c := range []struct {
		file, title, y string
		value          func(Run, Phase) float64
	}{
		{"wall", "wall time", "seconds", func(_ Run, p Phase) float64 { return p.Wall.Seconds() }},
		{"calls", r0.Unit + " per VM to provision", "calls / VM", func(r Run, p Phase) float64 { return r.perVM(p.ToProvision()) }},
		{"requests", r0.RequestUnit + " per VM", "requests / VM", func(r Run, p Phase) float64 { return r.perVM(Sum(p.Requests)) }},
		{"cpu", "controller CPU per VM", "CPU ms / VM", func(r Run, p Phase) float64 {
			return float64(p.CPU) / float64(time.Millisecond) / float64(r.Machines)
		}},
	} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s (%s): %s", r0.Bench, r0.Mode, c.title)
		p.X.Label.Text, p.Y.Label.Text = "machines", c.y
		p.Y.Min = 0
		var lines []any
		for i, ph := range r0.Phases {
			xys := plotter.XYs{}
			for _, r := range runs {
				if i < len(r.Phases) {
					xys = append(xys, plotter.XY{X: float64(r.Machines), Y: c.value(r, r.Phases[i])})
				}
			}
			lines = append(lines, strings.Fields(ph.Name)[0], xys)
		}
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return err
		}
		p.Y.Max *= 1.3 // room for the legend above the lines
		p.Legend.Top = true
		file := filepath.Join(dir, r0.Bench+"-"+strings.Trim(nonWord.ReplaceAllString(r0.Mode, "-"), "-")+"-"+c.file+".png")
		if err := p.Save(5*vg.Inch, 3*vg.Inch, file); err != nil {
			return err
		}
	}
	return nil
}
