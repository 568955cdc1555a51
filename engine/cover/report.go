package cover

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path"
	"slices"
	"strings"
)

// Source finds the source of a file by its import path
// ("example.com/mod/server/store.go"); an error means it cannot.
type Source func(importPath string) ([]byte, error)

// Report is what a profile says to people: how much of each file ran, and
// the blocks that never ran, by function, as line ranges. Under faults
// these are the recovery paths no run exercised.
type Report struct {
	Hit   int          `json:"stmts_reached"`
	Stmts int          `json:"stmts"`
	Root  string       `json:"root"` // the directory every file is in, which the text leaves out
	Files []FileReport `json:"files"`
}

// FileReport is one file of a Report.
type FileReport struct {
	File  string `json:"file"` // its import path
	Name  string `json:"name"` // its path under Report.Root
	Hit   int    `json:"stmts_reached"`
	Stmts int    `json:"stmts"`
	// Found: its source was found. Without it, the blocks never reached
	// are not put in functions, and the page leaves the file out.
	Found  bool     `json:"source_found"`
	Missed []Missed `json:"never_reached,omitempty"`
}

// Missed is the blocks of a function that never ran.
type Missed struct {
	Func  string  `json:"func,omitempty"` // "Server.apply"; "" outside any function, or when the source was not found
	Lines []Lines `json:"lines"`
	Stmts int     `json:"stmts"`
}

// Lines is a range of lines, both included.
type Lines struct {
	From int `json:"from"`
	To   int `json:"to"`
}

func (l Lines) String() string {
	if l.From == l.To {
		return fmt.Sprint(l.From)
	}
	return fmt.Sprintf("%d-%d", l.From, l.To)
}

// Percent is 100*hit/all, 0 when all is.
func Percent(hit, all int) float64 {
	if all == 0 {
		return 0
	}
	return 100 * float64(hit) / float64(all)
}

// NewReport reads what the profile says about each file, with src to
// find their functions (src may be nil).
func NewReport(p *Profile, src Source) *Report {
	r := &Report{}
	for blocks := range fileBlocks(p) {
		f := FileReport{File: blocks[0].File}
		var funcs []funcSpan
		if src != nil {
			if b, err := src(f.File); err == nil {
				f.Found = true
				funcs = funcSpans(b)
			}
		}
		for _, b := range blocks {
			f.Stmts += int(b.Stmts)
			if b.Hit {
				f.Hit += int(b.Stmts)
				continue
			}
			name := ""
			for _, fn := range funcs {
				if fn.contains(b) {
					name = fn.name
					break
				}
			}
			// The blocks of one function go together.
			var m *Missed
			for i := range f.Missed {
				if f.Missed[i].Func == name {
					m = &f.Missed[i]
				}
			}
			if m == nil {
				f.Missed = append(f.Missed, Missed{Func: name})
				m = &f.Missed[len(f.Missed)-1]
			}
			m.Stmts += int(b.Stmts)
			from, to := int(b.StLine), int(b.EnLine)
			if n := len(m.Lines); n > 0 && from <= m.Lines[n-1].To+1 {
				m.Lines[n-1].To = max(m.Lines[n-1].To, to)
			} else {
				m.Lines = append(m.Lines, Lines{from, to})
			}
		}
		r.Hit += f.Hit
		r.Stmts += f.Stmts
		r.Files = append(r.Files, f)
	}
	// Functions in the order of their first line never reached.
	for i := range r.Files {
		slices.SortStableFunc(r.Files[i].Missed, func(a, b Missed) int { return a.Lines[0].From - b.Lines[0].From })
	}
	r.Root = commonDir(r.Files)
	for i := range r.Files {
		r.Files[i].Name = strings.TrimPrefix(r.Files[i].File, r.Root)
	}
	return r
}

// fileBlocks yields the blocks of each file, files in order.
func fileBlocks(p *Profile) func(yield func([]Block) bool) {
	return func(yield func([]Block) bool) {
		bs := p.Blocks
		for len(bs) > 0 {
			n := 1
			for n < len(bs) && bs[n].File == bs[0].File {
				n++
			}
			if !yield(bs[:n]) {
				return
			}
			bs = bs[n:]
		}
	}
}

// commonDir is the directory every file is in, with its slash: what the
// text leaves out of each name.
func commonDir(files []FileReport) string {
	if len(files) == 0 {
		return ""
	}
	root := path.Dir(files[0].File) + "/"
	for _, f := range files[1:] {
		for !strings.HasPrefix(f.File, root) {
			if root == "./" || root == "/" {
				return ""
			}
			root = path.Dir(strings.TrimSuffix(root, "/")) + "/"
		}
	}
	if root == "./" {
		return ""
	}
	return root
}

// funcSpan is a function's place in its file.
type funcSpan struct {
	name                         string
	stLine, stCol, enLine, enCol int
}

func (f funcSpan) contains(b Block) bool {
	at := func(l1, c1, l2, c2 int) bool { return l1 < l2 || l1 == l2 && c1 <= c2 }
	return at(f.stLine, f.stCol, int(b.StLine), int(b.StCol)) && at(int(b.StLine), int(b.StCol), f.enLine, f.enCol)
}

// funcSpans are the functions of a Go file, declared at its top level
// (a literal belongs to the function it is in): "Server.apply" for a
// method. A file that does not parse has none.
func funcSpans(src []byte) []funcSpan {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	_ = err // what parsed is used
	var out []funcSpan
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			if t := recvType(fd.Recv.List[0].Type); t != "" {
				name = t + "." + name
			}
		}
		st, en := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, funcSpan{name, st.Line, st.Column, en.Line, en.Column})
	}
	return out
}

// recvType is a receiver's type name, without pointer or type parameters.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// WriteText prints the report: the total, each file's share, then the
// blocks never reached, by file and function, as line ranges.
func (r *Report) WriteText(w io.Writer) error {
	in := ""
	if r.Root != "" {
		in = " of " + strings.TrimSuffix(r.Root, "/")
	}
	fmt.Fprintf(w, "coverage: %d of %d statements (%.1f%%) in %s%s\n", r.Hit, r.Stmts, Percent(r.Hit, r.Stmts), plural(len(r.Files), "file"), in)
	if len(r.Files) == 0 {
		return nil
	}
	name, num := 0, 0
	for _, f := range r.Files {
		name = max(name, len(f.Name))
		num = max(num, len(fmt.Sprintf("%d/%d", f.Hit, f.Stmts)))
	}
	for _, f := range r.Files {
		fmt.Fprintf(w, "  %-*s  %*s  %5.1f%%\n", name, f.Name, num, fmt.Sprintf("%d/%d", f.Hit, f.Stmts), Percent(f.Hit, f.Stmts))
	}
	missed := r.Stmts - r.Hit
	if missed == 0 {
		fmt.Fprintf(w, "every statement was reached\n")
		return nil
	}
	fmt.Fprintf(w, "never reached (%s):\n", plural(missed, "statement"))
	for _, f := range r.Files {
		if len(f.Missed) == 0 {
			continue
		}
		note := ""
		if !f.Found {
			note = " (source not found)"
		}
		fmt.Fprintf(w, "  %s%s\n", f.Name, note)
		fn, stmts := 0, 0
		for _, m := range f.Missed {
			fn = max(fn, len(funcName(m)))
			stmts = max(stmts, len(plural(m.Stmts, "statement")))
		}
		for _, m := range f.Missed {
			var ls []string
			for _, l := range m.Lines {
				ls = append(ls, l.String())
			}
			word := "lines"
			if len(m.Lines) == 1 && m.Lines[0].From == m.Lines[0].To {
				word = "line"
			}
			fmt.Fprintf(w, "    %-*s  %*s: %s %s\n", fn, funcName(m), stmts, plural(m.Stmts, "statement"), word, strings.Join(ls, ", "))
		}
	}
	return nil
}

// funcName is how the text names a Missed's function.
func funcName(m Missed) string {
	if m.Func == "" {
		return "-"
	}
	return m.Func
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
