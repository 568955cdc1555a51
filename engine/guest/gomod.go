package guest

import (
	"path/filepath"
	"strconv"
	"strings"
)

const simModule = "github.com/seedfall/seedfall/sim"

// modInfo is what the cache key and the sim workspace need from a go.mod.
// The parser is deliberately lenient: it looks only at module, go and
// replace, and skips what it does not understand, because go build reports
// a malformed go.mod far better than we could.
type modInfo struct {
	path        string
	goVersion   string // the go directive, "" if none
	replacesSim bool
	// localReplaces are the directories (as written, relative to the
	// module root or absolute) that replace directives point at, in file
	// order. Go builds them from their own sources, so they are part of
	// the content of a build.
	localReplaces []string
}

func parseGoMod(data []byte) modInfo {
	var info modInfo
	block := ""
	for _, line := range strings.Split(string(data), "\n") {
		toks := tokenizeModLine(line)
		if len(toks) == 0 {
			continue
		}
		if block != "" {
			if toks[0] == ")" {
				block = ""
				continue
			}
			info.directive(block, toks)
			continue
		}
		if len(toks) == 2 && toks[1] == "(" {
			block = toks[0]
			continue
		}
		info.directive(toks[0], toks[1:])
	}
	return info
}

func (m *modInfo) directive(verb string, args []string) {
	switch verb {
	case "module":
		if len(args) >= 1 {
			m.path = args[0]
		}
	case "go":
		if len(args) >= 1 {
			m.goVersion = args[0]
		}
	case "replace":
		arrow := -1
		for i, a := range args {
			if a == "=>" {
				arrow = i
				break
			}
		}
		if arrow < 1 || arrow+1 >= len(args) {
			return
		}
		if args[0] == simModule {
			m.replacesSim = true
		}
		target := args[arrow+1:]
		if len(target) == 1 && isLocalModPath(target[0]) {
			m.localReplaces = append(m.localReplaces, target[0])
		}
	}
}

// isLocalModPath reports whether a replacement is a directory rather than a
// module path, by the rule the go command uses.
func isLocalModPath(p string) bool {
	for _, prefix := range []string{"./", "../", `.\`, `..\`} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return p == "." || p == ".." || filepath.IsAbs(p)
}

// tokenizeModLine splits one go.mod line into tokens: words, quoted strings
// (unquoted), "(", ")" and "=>". Comments end the line.
func tokenizeModLine(line string) []string {
	var toks []string
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(line[i:], "//"):
			return toks
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case strings.HasPrefix(line[i:], "=>"):
			toks = append(toks, "=>")
			i += 2
		case c == '"' || c == '`':
			j := i + 1
			for j < len(line) && line[j] != c {
				if c == '"' && line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return append(toks, line[i+1:]) // unterminated: let go build complain
			}
			s, err := strconv.Unquote(line[i : j+1])
			if err != nil {
				s = line[i+1 : j]
			}
			toks = append(toks, s)
			i = j + 1
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(" \t\r()\"`", rune(line[j])) &&
				!strings.HasPrefix(line[j:], "=>") && !strings.HasPrefix(line[j:], "//") {
				j++
			}
			toks = append(toks, line[i:j])
			i = j
		}
	}
	return toks
}

// compareGoVersions orders Go language versions such as "1.21", "1.21.3" and
// "1.22rc1" by their numbers; a release candidate counts as its release.
func compareGoVersions(a, b string) int {
	pa, pb := goVersionParts(a), goVersionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func goVersionParts(v string) [3]int {
	var parts [3]int
	for i, f := range strings.SplitN(v, ".", 3) {
		end := 0
		for end < len(f) && f[end] >= '0' && f[end] <= '9' {
			end++
		}
		parts[i], _ = strconv.Atoi(f[:end])
	}
	return parts
}
