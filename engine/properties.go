package engine

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// ClassProperty is declared with the other classes in run.go.

// Property kinds, as Result.Properties names them.
const (
	PropAlways              = "always"
	PropAlwaysOrUnreachable = "always_or_unreachable"
	PropSometimes           = "sometimes"
	PropReachable           = "reachable"
	PropUnreachable         = "unreachable"
)

// propKinds maps the assert ABI's kind numbers to names.
var propKinds = map[int]string{
	wasi.AssertAlways:              PropAlways,
	wasi.AssertAlwaysOrUnreachable: PropAlwaysOrUnreachable,
	wasi.AssertSometimes:           PropSometimes,
	wasi.AssertReachable:           PropReachable,
	wasi.AssertUnreachable:         PropUnreachable,
}

// propFunc is a function that declares a property: its kind and the index
// of its message argument.
type propFunc struct {
	kind string
	arg  int
}

// simFuncs maps the sim functions that declare a property to theirs.
var simFuncs = map[string]propFunc{
	"Always":              {PropAlways, 1},
	"AlwaysOrUnreachable": {PropAlwaysOrUnreachable, 1},
	"Sometimes":           {PropSometimes, 1},
	"Reachable":           {PropReachable, 0},
	"Unreachable":         {PropUnreachable, 0},
}

// sdkAssert is the Antithesis SDK's assert package: its assertions are
// seedfall properties (through the SDK shim of engine/guest/compat).
const sdkAssert = "github.com/antithesishq/antithesis-sdk-go/assert"

// sdkFuncs maps the SDK's assert functions to the property kind of the
// same meaning and the index of their message argument. A rich assertion
// is the property of its condition: AlwaysGreaterThan(l, r, ...) is
// Always(l > r, ...), AlwaysSome is an Always of a disjunction,
// SometimesAll a Sometimes of a conjunction.
var sdkFuncs = map[string]propFunc{
	"Always":                        {PropAlways, 1},
	"AlwaysOrUnreachable":           {PropAlwaysOrUnreachable, 1},
	"Sometimes":                     {PropSometimes, 1},
	"Reachable":                     {PropReachable, 0},
	"Unreachable":                   {PropUnreachable, 0},
	"AlwaysGreaterThan":             {PropAlways, 2},
	"AlwaysGreaterThanOrEqualTo":    {PropAlways, 2},
	"AlwaysLessThan":                {PropAlways, 2},
	"AlwaysLessThanOrEqualTo":       {PropAlways, 2},
	"SometimesGreaterThan":          {PropSometimes, 2},
	"SometimesGreaterThanOrEqualTo": {PropSometimes, 2},
	"SometimesLessThan":             {PropSometimes, 2},
	"SometimesLessThanOrEqualTo":    {PropSometimes, 2},
	"AlwaysSome":                    {PropAlways, 1},
	"SometimesAll":                  {PropSometimes, 1},
}

// Property is what one run saw of one sim property: the evaluations of
// one (kind, message) wherever they happened. A property the programs'
// source declares but the run never reached is listed with Hits 0.
type Property struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Site    string `json:"site"` // "file:line" of its first hit, or of its declaration
	Hits    uint64 `json:"hits"`
	True    uint64 `json:"true"`  // evaluations with the condition true (every hit of Reachable and Unreachable)
	False   uint64 `json:"false"` // evaluations with the condition false
	// Failed: this property failed the run (a false Always or
	// AlwaysOrUnreachable, a reached Unreachable).
	Failed bool `json:"failed,omitempty"`
}

// Holds reports whether the property was met by this run alone: an Always
// reached and never false, a Sometimes true once, a Reachable reached, an
// AlwaysOrUnreachable never false, an Unreachable not reached. Across a
// sweep the CLI combines runs.
func (p Property) Holds() bool {
	switch p.Kind {
	case PropAlways:
		return p.Hits > 0 && p.False == 0
	case PropAlwaysOrUnreachable:
		return p.False == 0
	case PropSometimes, PropReachable:
		return p.True > 0
	case PropUnreachable:
		return p.Hits == 0
	}
	return false
}

func init() {
	register(familyDef{name: "properties", open: openProperties})
}

type propKey struct{ kind, message string }

// propFamily is the properties' state in one run, in order of first hit.
type propFamily struct {
	*env
	seen  []*Property
	index map[propKey]*Property
	// closest is, by property, the least distance bucket its operands
	// came to (guide), and guidance every time one came closer.
	closest  map[propKey]int
	guidance []Guidance
}

// Guidance is a rich assertion whose operands came closer than before in
// the run (Antithesis's numeric guidance): a Sometimes comparison not yet
// true, or an Always comparison still true, whose left and right operands
// came within 2^Bucket - 1 of each other at At. A search that keeps the
// runs that came closest reaches the boundary sooner (engine/guide).
type Guidance struct {
	Kind, Message string
	Bucket        int
	At            time.Duration
}

func openProperties(e *env) (family, error) {
	pf := &propFamily{env: e, index: map[propKey]*Property{}, closest: map[propKey]int{}}
	return family{process: pf.process, result: func(res *Result) {
		res.Properties = pf.list(pf.declared())
		res.Guidance = pf.guidance
	}}, nil
}

// guide notes how close a rich assertion's operands came, from its
// details ({"left": 4, "right": 3, ...}), when that is closer than before.
func (pf *propFamily) guide(k propKey, details string) {
	if !strings.Contains(details, `"left"`) {
		return
	}
	var ops struct{ Left, Right *float64 }
	if json.Unmarshal([]byte(details), &ops) != nil || ops.Left == nil || ops.Right == nil {
		return
	}
	d := math.Abs(*ops.Left - *ops.Right)
	if math.IsNaN(d) {
		return
	}
	bucket := 0
	for d >= 1 && bucket < 64 {
		d /= 2
		bucket++
	}
	if b, ok := pf.closest[k]; ok && b <= bucket {
		return
	}
	pf.closest[k] = bucket
	pf.guidance = append(pf.guidance, Guidance{Kind: k.kind, Message: k.message, Bucket: bucket, At: time.Duration(pf.now())})
}

func (pf *propFamily) process(n *node, p *wasi.Process) {
	p.Assert = func(a wasi.Assertion) bool { return pf.assert(n, a) }
}

// assert records one evaluation and says whether it failed the run. The
// trace shows the first hit of each property, the first time a Sometimes
// holds, and a failure.
func (pf *propFamily) assert(n *node, a wasi.Assertion) (stop bool) {
	if a.Kind == wasi.AssertEvent && !pf.over() {
		// lifecycle.SendEvent of the Antithesis SDK: a line in the trace.
		pf.event(n, fmt.Sprintf("event %q%s", a.Message, withDetails(a.Details)))
		return false
	}
	kind, ok := propKinds[a.Kind]
	if !ok || pf.over() {
		return false
	}
	fails := false
	switch kind {
	case PropAlways, PropAlwaysOrUnreachable:
		fails = !a.Cond
	case PropUnreachable:
		fails = true
	}
	k := propKey{kind, a.Message}
	pr := pf.index[k]
	if pr == nil {
		pr = &Property{Kind: kind, Message: a.Message, Site: a.Site}
		pf.index[k] = pr
		pf.seen = append(pf.seen, pr)
		if !fails { // else the failure's line says it all
			pf.event(n, fmt.Sprintf("property %s %q first reached at %s%s", kind, a.Message, a.Site, withDetails(a.Details)))
		}
	}
	pr.Hits++
	if kind == PropSometimes && !a.Cond || kind == PropAlways && a.Cond {
		pf.guide(k, a.Details)
	}
	if a.Cond {
		pr.True++
		if kind == PropSometimes && pr.True == 1 && pr.Hits > 1 {
			pf.event(n, fmt.Sprintf("property %s %q first true at %s%s", kind, a.Message, a.Site, withDetails(a.Details)))
		}
	} else {
		pr.False++
	}
	if !fails {
		return false
	}
	pr.Failed = true
	what := "failed"
	if kind == PropUnreachable {
		what = "was reached"
	}
	pf.event(n, fmt.Sprintf("property %s %q %s at %s%s", kind, a.Message, what, a.Site, withDetails(a.Details)))
	reason := fmt.Sprintf("property %q %s in %s", a.Message, what, n.label())
	if a.Details != "" {
		reason += ": details " + a.Details
	}
	pf.fail(ClassProperty, n, reason)
	return true
}

func withDetails(d string) string {
	if d == "" {
		return ""
	}
	return ": " + d
}

// list is the run's properties in order of first hit, then those the
// programs declare (declared) that it never reached, by site.
func (pf *propFamily) list(declared []Property) []Property {
	var out []Property
	for _, x := range pf.seen {
		out = append(out, *x)
	}
	for _, d := range declared {
		if pf.index[propKey{d.Kind, d.Message}] == nil {
			out = append(out, d)
		}
	}
	return out
}

// declared caches, per program binary, the properties its source declares.
var declared sync.Map // "hash pkg" -> []Property

// declared lists the properties that the programs' source declares, so
// that one no seed reaches still shows in coverage: every call of a sim
// property function with a constant message in the program's package and
// the packages of its own module it imports (as built for wasip1).
// Properties in other modules, or with computed messages, are known once
// reached. Sorted by site, without repeats.
func (p *Prepared) declared() []Property {
	var out []Property
	seen := map[propKey]bool{}
	add := func(pkg, hash string) {
		if pkg == "" {
			return // a prebuilt wasm: no source to read
		}
		key := hash + " " + pkg
		v, ok := declared.Load(key)
		if !ok {
			v, _ = declared.LoadOrStore(key, scanProperties(pkg))
		}
		for _, d := range v.([]Property) {
			if k := (propKey{d.Kind, d.Message}); !seen[k] {
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	for _, prog := range p.Programs {
		add(prog.Pkg, prog.Hash)
		if prog.Upgrade != nil {
			add(prog.UpgradeTo, prog.Upgrade.Hash)
		}
	}
	slices.SortStableFunc(out, func(a, b Property) int { return strings.Compare(a.Site, b.Site) })
	return out
}

// scanProperties parses the package in dir and the packages of its module
// it imports, and lists their property calls. Errors only make the list
// shorter: the build already reported anything that matters.
func scanProperties(dir string) []Property {
	root, modPath := fsutil.ModuleOf(dir)
	if root == "" {
		return nil
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "wasip1", "wasm", false
	var out []Property
	fset := token.NewFileSet()
	done := map[string]bool{}
	queue := []string{dir}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if done[d] {
			continue
		}
		done[d] = true
		bp, err := ctx.ImportDir(d, 0)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(root, d)
		importPath := path.Join(modPath, filepath.ToSlash(rel))
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(d, name), nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			out = append(out, fileProperties(fset, f, importPath+"/"+name)...)
		}
		for _, imp := range bp.Imports {
			if sub, ok := strings.CutPrefix(imp, modPath+"/"); ok {
				queue = append(queue, filepath.Join(root, filepath.FromSlash(sub)))
			}
		}
	}
	return out
}

// fileProperties finds the calls sim.Always(cond, "message", ...) and
// kin, and those of the Antithesis SDK's assert package, in one file; file
// is its name as a -trimpath build reports it.
func fileProperties(fset *token.FileSet, f *ast.File, file string) []Property {
	names := map[string]map[string]propFunc{} // local package name -> its property functions
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		var funcs = simFuncs
		switch p {
		case "github.com/seedfall/seedfall/sim":
		case sdkAssert:
			funcs = sdkFuncs
		default:
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name != "_" && name != "." {
			names[name] = funcs
		}
	}
	if len(names) == 0 {
		return nil
	}
	var out []Property
	ast.Inspect(f, func(x ast.Node) bool {
		call, ok := x.(*ast.CallExpr)
		if !ok {
			return true
		}
		fun := call.Fun
		switch g := fun.(type) { // assert.AlwaysLessThan[int](...)
		case *ast.IndexExpr:
			fun = g.X
		case *ast.IndexListExpr:
			fun = g.X
		}
		sel, ok := fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || names[id.Name] == nil {
			return true
		}
		fn, ok := names[id.Name][sel.Sel.Name]
		if !ok || len(call.Args) <= fn.arg {
			return true
		}
		lit, ok := call.Args[fn.arg].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		msg, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		site := fmt.Sprintf("%s:%d", file, fset.Position(call.Pos()).Line)
		out = append(out, Property{Kind: fn.kind, Message: msg, Site: site})
		return true
	})
	return out
}
