// Package gosim_test keeps scripts/gosim/kvlog, the port of examples/kvlog to a
// gosim test, the same program as the original: the store is a copy, and the
// functions the port did not have to change are the original's, word for word;
// its parameters default to the original flags; and it runs the world of
// examples/kvlog/seedfall.json (faults, latency, duration, the server's flags).
// The port itself is a module of its own (gosim needs Go 1.23), which go test
// ./... does not enter; this test only reads its files.
package gosim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// afterPackage is a Go file's text after its package clause.
func afterPackage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := "\n" + string(b)
	i := strings.Index(s, "\npackage ")
	if i < 0 {
		t.Fatalf("%s: no package clause", path)
	}
	s = s[i+1:]
	return s[strings.Index(s, "\n")+1:]
}

// decls maps the name of each function, method (Type.Name), type and constant of
// a Go file to its source text, comments left out.
func decls(t *testing.T, path string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	text := func(n ast.Node) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil {
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				name = typ.(*ast.Ident).Name + "." + name
			}
			out[name] = text(d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out[s.Name.Name] = text(s)
				case *ast.ValueSpec:
					if d.Tok == token.CONST {
						for _, n := range s.Names {
							out[n.Name] = text(s)
						}
					}
				}
			}
		}
	}
	return out
}

func TestStoreIsACopy(t *testing.T) {
	orig := afterPackage(t, "../../examples/kvlog/server/store.go")
	port := afterPackage(t, "kvlog/store_test.go")
	if orig != port {
		t.Errorf("scripts/gosim/kvlog/store_test.go is no longer examples/kvlog/server/store.go: copy it again (keep the port's header)")
	}
}

func TestUnchangedFunctionsAreTheOriginals(t *testing.T) {
	for _, c := range []struct {
		orig, port string
		names      []string
		// edits turn the original's text into the port's: kvclient's log.Fatalf
		// (exit 1) is the port's failf (the test fails the seed).
		edits []string
	}{
		{"../../examples/kvlog/server/main.go", "kvlog/server_test.go", []string{"serve", "handle"}, nil},
		{"../../examples/kvclient/main.go", "kvlog/client_test.go",
			[]string{"retryDelay", "attemptTimeout", "client", "client.request", "client.try", "client.close"},
			[]string{"log.Fatalf(", "failf("}},
	} {
		orig, port := decls(t, c.orig), decls(t, c.port)
		r := strings.NewReplacer(c.edits...)
		for _, name := range c.names {
			o, ok := orig[name]
			if !ok {
				t.Errorf("%s has no %s", c.orig, name)
				continue
			}
			if got, want := port[name], r.Replace(o); got != want {
				t.Errorf("%s of %s differs from the original in %s:\n%s\nwant\n%s", name, c.port, c.orig, got, want)
			}
		}
	}
}

// flagDefaults maps each flag that main in path defines (flag.Int("ops", 60,
// ...)) to the source text of its default.
func flagDefaults(t *testing.T, path string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 3 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.X.(*ast.Ident).Name != "flag" {
			return true
		}
		name, ok := call.Args[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		var b bytes.Buffer
		printer.Fprint(&b, fset, call.Args[1])
		out[strings.Trim(name.Value, `"`)] = b.String()
		return true
	})
	return out
}

// paramDefaults maps each flag of a params struct of the port (a field whose
// comment starts with the flag, as in "Ops int // -ops") to the source text of
// its value in the Default function's composite literal.
func paramDefaults(t *testing.T, path, typ, fn string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	flagOf := map[string]string{} // field -> flag
	values := map[string]string{} // field -> default
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || ts.Name.Name != typ {
					continue
				}
				for _, fld := range ts.Type.(*ast.StructType).Fields.List {
					if fld.Comment == nil {
						continue
					}
					c := strings.Fields(strings.TrimPrefix(fld.Comment.List[0].Text, "//"))
					if len(c) > 0 && strings.HasPrefix(c[0], "-") {
						flagOf[fld.Names[0].Name] = strings.TrimSuffix(strings.TrimPrefix(c[0], "-"), ":")
					}
				}
			}
		case *ast.FuncDecl:
			if d.Name.Name != fn {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok {
					return true
				}
				var b bytes.Buffer
				printer.Fprint(&b, fset, kv.Value)
				values[kv.Key.(*ast.Ident).Name] = b.String()
				return true
			})
		}
	}
	out := map[string]string{}
	for field, flag := range flagOf {
		v, ok := values[field]
		if !ok {
			v = "(zero)"
		}
		out[flag] = v
	}
	return out
}

// The port's parameters default to the original flags' defaults, but for the
// addresses (gosim has IP addresses only, and a listener needs its own).
func TestParamsDefaultToTheFlags(t *testing.T) {
	for _, c := range []struct {
		orig, port, typ, fn string
		differ              map[string]bool
		zero                map[string]string // flags whose default is the type's zero value
	}{
		{"../../examples/kvlog/server/main.go", "kvlog/server_test.go", "ServerParams", "DefaultServerParams",
			map[string]bool{"listen": true}, map[string]string{"reread": "0"}},
		{"../../examples/kvclient/main.go", "kvlog/client_test.go", "ClientParams", "DefaultClientParams",
			map[string]bool{"addr": true}, nil},
	} {
		orig, port := flagDefaults(t, c.orig), paramDefaults(t, c.port, c.typ, c.fn)
		if len(orig) != len(port) {
			t.Errorf("%s has flags %v; %s.%s has %v", c.orig, orig, c.port, c.typ, port)
		}
		for flag, want := range orig {
			got, ok := port[flag]
			switch {
			case !ok:
				t.Errorf("%s: no parameter for -%s", c.port, flag)
			case c.differ[flag]:
			case got == "(zero)" && c.zero[flag] == want:
			case got != want:
				t.Errorf("%s: -%s defaults to %s in the port, %s in %s", c.port, flag, got, want, c.orig)
			}
		}
	}
}

// portConsts evaluates the constants of kvlog/kvlog_test.go that describe the
// world: plain numbers, and durations written as N * time.Unit.
func portConsts(t *testing.T) map[string]float64 {
	t.Helper()
	units := map[string]time.Duration{"Millisecond": time.Millisecond, "Second": time.Second}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "kvlog/kvlog_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	num := func(e ast.Expr) float64 {
		lit, ok := e.(*ast.BasicLit)
		if !ok {
			t.Fatalf("kvlog_test.go: %T is not a number", e)
		}
		v, err := strconv.ParseFloat(lit.Value, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	out := map[string]float64{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				switch v := vs.Values[i].(type) {
				case *ast.BinaryExpr: // N * time.Unit, as seconds
					unit := units[v.Y.(*ast.SelectorExpr).Sel.Name]
					if unit == 0 || v.Op != token.MUL {
						t.Fatalf("kvlog_test.go: %s is not N * time.Millisecond or time.Second", n.Name)
					}
					out[n.Name] = num(v.X) * unit.Seconds()
				case *ast.BasicLit:
					if v.Kind == token.INT || v.Kind == token.FLOAT {
						out[n.Name] = num(v)
					}
				}
			}
		}
	}
	return out
}

// The port runs the world of examples/kvlog/seedfall.json: its faults, latency
// and duration, and the server's flags. A field the port does not know (a new
// fault, say) fails this test until the port has it too.
func TestPortIsTheWorldFile(t *testing.T) {
	b, err := os.ReadFile("../../examples/kvlog/seedfall.json")
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Nodes []struct {
			Name, Pkg string
			Args      []string
		}
		Workload struct {
			Name, Pkg string
			Args      []string
		}
		NetOverlay bool `json:"net_overlay"`
		Supervise  bool
		Duration   string
		Latency    []string
		Faults     map[string]json.RawMessage
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("examples/kvlog/seedfall.json: %v (a field the port does not model?)", err)
	}
	sec := func(s string) float64 {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return d.Seconds()
	}
	var crashPerSec float64
	var restart []string
	for k, v := range w.Faults {
		var err error
		switch k {
		case "crash_per_sec":
			err = json.Unmarshal(v, &crashPerSec)
		case "restart_after":
			err = json.Unmarshal(v, &restart)
		default:
			t.Errorf("examples/kvlog/seedfall.json: the port has no fault %q", k)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	c := portConsts(t)
	for _, x := range []struct {
		name       string
		port, want float64
	}{
		{"crashPerSec", c["crashPerSec"], crashPerSec},
		{"restartMin", c["restartMin"], sec(restart[0])},
		{"restartMax", c["restartMax"], sec(restart[1])},
		{"latencyMin", c["latencyMin"], sec(w.Latency[0])},
		{"latencyMax", c["latencyMax"], sec(w.Latency[1])},
		{"worldHorizon", c["worldHorizon"], sec(w.Duration)},
	} {
		if x.port != x.want {
			t.Errorf("kvlog_test.go: %s is %v, the world file says %v", x.name, x.port, x.want)
		}
	}
	if len(w.Nodes) != 1 || w.Nodes[0].Name != "server" || len(w.Workload.Args) != 0 || !w.Supervise {
		t.Errorf("examples/kvlog/seedfall.json is no longer one supervised server and the client with its defaults: %+v", w)
	}
	// The server's flags are set in TestKvlog as sp.Ack = "before-sync" and so on.
	src, err := os.ReadFile("kvlog/kvlog_test.go")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{"-ack": `sp.Ack = "%s"`, "-sync-every": `sp.SyncEvery = %s`}
	args := w.Nodes[0].Args
	for i := 0; i+1 < len(args); i += 2 {
		form, ok := set[args[i]]
		if !ok {
			t.Errorf("the server's flag %s is not set in kvlog_test.go", args[i])
			continue
		}
		v := args[i+1]
		if args[i] == "-sync-every" {
			v = strconv.Itoa(int(sec(v)*1000)) + " * time.Millisecond"
		}
		if want := fmt.Sprintf(form, v); !strings.Contains(string(src), want) {
			t.Errorf("kvlog_test.go does not say %s (the world's %s %s)", want, args[i], args[i+1])
		}
	}
}
