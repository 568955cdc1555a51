package simtest

import (
	"flag"
	"regexp"
	"strings"
	"testing"
)

// selector guesses whether go test's -run and -skip flags select a
// subtest of t, by the rules of package testing: the pattern split at
// slashes outside brackets and parentheses, each part matching one level
// of the name, alternatives at top-level bars. It only decides which
// seeds run ahead of their subtests: a wrong guess costs time, never a
// result, since a subtest whose seed did not run ahead runs it itself.
func selector(t *testing.T) func(sub string) bool {
	run, skip := flagValue("test.run"), flagValue("test.skip")
	runM, skipM := splitPattern(run), splitPattern(skip)
	return func(sub string) bool {
		elem := strings.Split(t.Name()+"/"+sub, "/")
		if run != "" && !matches(runM, elem, false) {
			return false
		}
		return skip == "" || !matches(skipM, elem, true)
	}
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// splitPattern splits a -run pattern into its alternatives, each a list
// of one pattern per level of a test's name.
func splitPattern(s string) [][]string {
	var alts [][]string
	var cur []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			brackets = max(brackets-1, 0)
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				cur = append(cur, s[:i])
				if s[i] == '|' {
					alts = append(alts, cur)
					cur = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(alts, append(cur, s))
}

// matches says whether a name's levels match one alternative. A pattern
// with more levels than the name matches it partially: for -run that
// selects it (its subtests may match), for -skip it does not skip it.
func matches(alts [][]string, elem []string, whole bool) bool {
	for _, alt := range alts {
		ok := true
		for i, s := range elem {
			if i >= len(alt) {
				break
			}
			re, err := regexp.Compile(alt[i])
			if err != nil {
				return !whole // no guess: run it ahead, do not skip it
			}
			if !re.MatchString(s) {
				ok = false
				break
			}
		}
		if ok && (!whole || len(elem) >= len(alt)) {
			return true
		}
	}
	return false
}
