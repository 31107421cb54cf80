package doctest

import (
	"strings"
)

// Command is one simple command of a shell block: its words (quotes removed, leading NAME=value
// assignments dropped), without redirections.
type Command struct {
	Words []string
	Line  int // line in the block (1-based) where the command starts
}

// Commands splits a shell block into its simple commands, as far as a doc needs: quotes,
// backslashes, line continuations, comments, pipes and lists (| || && ; &), subshells, $(...)
// kept inside its word, redirections and here-documents (whose bodies are skipped).
func Commands(text string) []Command {
	p := &shellParser{src: text, line: 1}
	p.parse()
	return p.cmds
}

type shellParser struct {
	src      string
	i, line  int
	cmds     []Command
	cur      Command
	word     strings.Builder
	inWord   bool
	redirect bool     // the next word is a redirection's target
	heredocs []string // delimiters of here-documents that start after this line
}

func (p *shellParser) parse() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.src):
			if p.src[p.i+1] == '\n' { // a line continuation
				p.line++
			} else {
				p.add(p.src[p.i+1 : p.i+2])
			}
			p.i += 2
		case c == '\'':
			end := strings.IndexByte(p.src[p.i+1:], '\'')
			if end < 0 {
				end = len(p.src) - p.i - 1
			}
			p.add(p.src[p.i+1 : p.i+1+end])
			p.i += end + 2
		case c == '"':
			p.doubleQuoted()
		case c == '$' && p.i+1 < len(p.src) && p.src[p.i+1] == '(':
			p.substitution()
		case c == '#' && !p.inWord:
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == '\n':
			p.endCommand()
			p.i++
			p.line++
			p.skipHeredocs()
		case c == ' ' || c == '\t':
			p.endWord()
			p.i++
		case strings.IndexByte("|&;()", c) >= 0:
			p.endCommand()
			p.i++
		case c == '<' || c == '>':
			p.redirection()
		default:
			p.add(p.src[p.i : p.i+1])
			p.i++
		}
	}
	p.endCommand()
}

func (p *shellParser) add(s string) {
	p.word.WriteString(s)
	p.inWord = true
	p.line += strings.Count(s, "\n")
}

func (p *shellParser) doubleQuoted() {
	p.inWord = true
	for p.i++; p.i < len(p.src) && p.src[p.i] != '"'; p.i++ {
		if p.src[p.i] == '\\' && p.i+1 < len(p.src) && strings.IndexByte(`"\$`+"`", p.src[p.i+1]) >= 0 {
			p.i++
		}
		p.add(p.src[p.i : p.i+1])
	}
	p.i++
}

// substitution keeps $( ... ) in the current word, up to its matching parenthesis.
func (p *shellParser) substitution() {
	depth, j := 0, p.i+1
	for ; j < len(p.src); j++ {
		if p.src[j] == '(' {
			depth++
		} else if p.src[j] == ')' {
			if depth--; depth == 0 {
				break
			}
		}
	}
	p.add(p.src[p.i:min(j+1, len(p.src))])
	p.i = j + 1
}

// redirection drops <, >, >>, N>&M and a here-document's delimiter; the target word goes too.
func (p *shellParser) redirection() {
	if p.inWord && isDigits(p.word.String()) { // 2>&1: the 2 is the redirection's
		p.word.Reset()
		p.inWord = false
	}
	p.endWord()
	if strings.HasPrefix(p.src[p.i:], "<<") {
		p.i += 2
		p.i += len(p.src[p.i:]) - len(strings.TrimLeft(p.src[p.i:], "-"))
		rest := strings.TrimLeft(p.src[p.i:], " ")
		p.i += len(p.src[p.i:]) - len(rest)
		end := strings.IndexAny(rest, " \n;|&")
		if end < 0 {
			end = len(rest)
		}
		p.heredocs = append(p.heredocs, strings.Trim(rest[:end], `'"`))
		p.i += end
		return
	}
	for p.i < len(p.src) && strings.IndexByte("<>", p.src[p.i]) >= 0 {
		p.i++
	}
	if strings.HasPrefix(p.src[p.i:], "&") { // >&2
		p.i++
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
		}
		return
	}
	p.redirect = true
}

// skipHeredocs skips the bodies of the here-documents opened on the line just ended.
func (p *shellParser) skipHeredocs() {
	for _, delim := range p.heredocs {
		for p.i < len(p.src) {
			end := strings.IndexByte(p.src[p.i:], '\n')
			if end < 0 {
				end = len(p.src) - p.i
			}
			line := p.src[p.i : p.i+end]
			p.i += end + 1
			p.line++
			if strings.TrimSpace(line) == delim {
				break
			}
		}
	}
	p.heredocs = nil
}

func (p *shellParser) endWord() {
	if !p.inWord {
		return
	}
	w := p.word.String()
	p.word.Reset()
	p.inWord = false
	switch {
	case p.redirect:
		p.redirect = false
	case len(p.cur.Words) == 0 && isAssignment(w):
	default:
		if len(p.cur.Words) == 0 {
			p.cur.Line = p.line
		}
		p.cur.Words = append(p.cur.Words, w)
	}
}

func (p *shellParser) endCommand() {
	p.endWord()
	if len(p.cur.Words) > 0 {
		p.cmds = append(p.cmds, p.cur)
	}
	p.cur = Command{}
}

// isAssignment reports whether w is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
