package doctest

import (
	"regexp"
	"strings"
)

// Help is what a command's --help output says about its flags and subcommands.
type Help struct {
	Flags       map[string]bool // flag name (without dashes) -> takes a value
	Subcommands map[string]bool
}

var (
	// a flag line: "  -n, --namespace string   ..." (cobra), "    -n, --namespace='':" (kubectl),
	// "  -api-server string" (Go's flag package)
	flagNames = regexp.MustCompile(`^(?:-{1,2}[A-Za-z0-9][A-Za-z0-9-]*(?:, )?)+`)
	// a subcommand line: two blanks, a lower-case name, two or more blanks, a description
	subcommandLine = regexp.MustCompile(`^  ([a-z][a-z0-9-]*)\s{2,}\S`)
	// the value types that cobra's and Go's flag usage print after a flag that takes a value
	valueTypes = map[string]bool{
		"string": true, "strings": true, "stringArray": true, "stringSlice": true, "stringToString": true,
		"int": true, "int32": true, "int64": true, "uint": true, "uint32": true, "uint64": true,
		"duration": true, "float": true, "float64": true, "value": true, "ints": true,
	}
)

// ParseHelp reads the --help output of a cobra command (clusterctl, kubectl) or of a Go flag set.
func ParseHelp(out string) Help {
	h := Help{Flags: map[string]bool{}, Subcommands: map[string]bool{}}
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if m := subcommandLine.FindStringSubmatch(line); m != nil {
			h.Subcommands[m[1]] = true
			continue
		}
		names := flagNames.FindString(trimmed)
		if names == "" {
			continue
		}
		rest := trimmed[len(names):]
		takesValue := false
		switch {
		case strings.HasPrefix(rest, "="): // kubectl: --name=default:
			def, _, _ := strings.Cut(rest[1:], ":")
			takesValue = def != "false" && def != "true"
		case strings.HasPrefix(rest, " "):
			typ := strings.Fields(rest + " x")[0]
			takesValue = valueTypes[typ]
		}
		for _, n := range strings.Split(names, ", ") {
			if n = strings.TrimLeft(strings.TrimSpace(n), "-"); n != "" {
				h.Flags[n] = takesValue
			}
		}
	}
	return h
}

// Merge adds other's flags and subcommands to h (global flags, say).
func (h Help) Merge(other Help) {
	for k, v := range other.Flags {
		h.Flags[k] = v
	}
	for k := range other.Subcommands {
		h.Subcommands[k] = true
	}
}
