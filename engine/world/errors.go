package world

import (
	"fmt"
	"strings"
)

// Error is a problem in a world file, located by file, line and key path.
type Error struct {
	File string // the config file as given
	Line int    // 1-based; 0 when the problem has no line
	Path string // key path such as "nodes[1].pkg"; empty for the file as a whole
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Suggest returns the candidate nearest to word by edit distance, or "" when
// none is close enough to be a plausible typo. Ties go to the earlier
// candidate, so the answer does not depend on anything but the list order.
func Suggest(word string, candidates []string) string {
	lw := strings.ToLower(word)
	limit := max(1, len(lw)/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(lw, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" || len(lw) < 4 {
		return best
	}
	// A word cut short ("upgrade" for "upgrade_to") is far by edit distance
	// but plain to a reader; suggest the one candidate it begins.
	for _, c := range candidates {
		if strings.HasPrefix(c, lw) {
			if best != "" {
				return ""
			}
			best = c
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours each cost 1, so
// "agrs" is one step from "args".
func editDistance(a, b string) int {
	la, lb := len(a), len(b)
	d := make([][]int, la+1)
	for i := range d {
		d[i] = make([]int, lb+1)
		d[i][0] = i
	}
	for j := 0; j <= lb; j++ {
		d[0][j] = j
	}
	for i := 1; i <= la; i++ {
		for j := 1; j <= lb; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[la][lb]
}

// oneOf formats a list of valid values for a message: `a, b or c`.
func oneOf(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
