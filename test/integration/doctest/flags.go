package doctest

import (
	"strings"
)

// HelpFunc returns the help of a tool's subcommand path ([] is the tool itself).
type HelpFunc func(path []string) (Help, error)

// UnknownFlags walks args (a command's words after the tool's name) as the tool would: words
// that name a subcommand descend into it until the first positional argument, a flag that takes
// a value consumes the next word unless it is written --flag=value. It returns the flags that
// the help of the subcommand they are given to does not list.
func UnknownFlags(args []string, help HelpFunc) ([]string, error) {
	var path, unknown []string
	h, err := help(path)
	if err != nil {
		return nil, err
	}
	positional := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			return unknown, nil
		case len(w) > 1 && strings.HasPrefix(w, "-"):
			name, _, inline := strings.Cut(strings.TrimLeft(w, "-"), "=")
			takesValue, ok := h.Flags[name]
			if !ok {
				unknown = append(unknown, strings.Join(append(append([]string{}, path...), w), " "))
				continue
			}
			if takesValue && !inline {
				i++
			}
		case !positional && h.Subcommands[w]:
			path = append(path, w)
			if h, err = help(path); err != nil {
				return nil, err
			}
		default:
			positional = true
		}
	}
	return unknown, nil
}
