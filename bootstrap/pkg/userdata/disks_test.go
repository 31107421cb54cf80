package userdata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestDisksStepNeverWipes reads the script's syntax tree: nothing erases a disk (Clear-Disk,
// Remove-Partition, diskpart, a forced Format-Volume), and the cmdlets that write a disk are
// each called once, in Step-Disks, under the condition that makes them safe: Initialize-Disk
// only for a RAW disk, New-Partition and Format-Volume only when Get-DataPartition found no
// partition.
func TestDisksStepNeverWipes(t *testing.T) {
	path := filepath.Join("ps", "bootstrap.ps1")
	calls, err := pscheck.Calls(path)
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(source), "\n")
	guards := map[string]string{
		"Initialize-Disk": "if ($disk.PartitionStyle -eq 'RAW') {",
		"New-Partition":   "if ($null -eq $partition) {",
		"Format-Volume":   "if ($null -eq $partition) {",
	}
	seen := map[string]int{}
	for _, c := range calls {
		name := strings.ToLower(c.Name)
		if name == "clear-disk" || name == "remove-partition" || strings.HasPrefix(name, "diskpart") || name == "set-disk" && strings.Contains(strings.Join(c.Args, " "), "PartitionStyle") {
			t.Errorf("line %d: %s %v can erase a disk", c.Line, c.Name, c.Args)
		}
		guard, ok := guards[c.Name]
		if !ok {
			continue
		}
		seen[c.Name]++
		if c.Function != "Step-Disks" {
			t.Errorf("line %d: %s is called in %q, want only in Step-Disks", c.Line, c.Name, c.Function)
		}
		if got := enclosingIf(lines, c.Line); got != guard {
			t.Errorf("line %d: %s runs under %q, want %q", c.Line, c.Name, got, guard)
		}
		for _, a := range c.Args {
			if strings.EqualFold(a, "-Force") {
				t.Errorf("line %d: %s is forced", c.Line, c.Name)
			}
		}
	}
	for name := range guards {
		if seen[name] != 1 {
			t.Errorf("%s is called %d times, want once", name, seen[name])
		}
	}
	// Get-DataPartition returns $null only for a disk without partitions (Reserved aside).
	body := functionBody(lines, "Get-DataPartition")
	if !strings.Contains(body, "if ($parts.Count -eq 0) {\n        return $null") || strings.Count(body, "return $null") != 1 {
		t.Errorf("Get-DataPartition may return $null for a disk with partitions:\n%s", body)
	}
}

// enclosingIf is the nearest line above line (1-based) that opens an if block at a smaller indent.
func enclosingIf(lines []string, line int) string {
	indent := len(lines[line-1]) - len(strings.TrimLeft(lines[line-1], " "))
	for i := line - 2; i >= 0; i-- {
		l := lines[i]
		trimmed := strings.TrimLeft(l, " ")
		if trimmed != "" && len(l)-len(trimmed) < indent {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func functionBody(lines []string, name string) string {
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "function "+name+" {"):
			in = true
		case in && l == "}":
			return strings.Join(out, "\n")
		case in:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
