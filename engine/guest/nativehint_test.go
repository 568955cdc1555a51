package guest

import (
	"context"
	"strings"
	"testing"
)

// A program that calls a package written in cgo does not build for
// wasip1; the error names the package and says why, not only what is
// undefined. A package of the standard library with cgo files (net) is not
// blamed.
func TestBuildNamesCgo(t *testing.T) {
	dir := newModule(t, map[string]string{
		// As go-sqlite3: the work in files that import "C", a mock without.
		"csql/csql.go": `package csql

// #include <stdlib.h>
import "C"

func Version() string { return "3.0" }
`,
		"csql/mock.go": `//go:build !cgo

package csql

// Driver exists without cgo, Version does not.
type Driver struct{}
`,
		"main.go": `package main

import (
	"fmt"
	"net"

	"example.com/app/csql"
)

func main() { fmt.Println(csql.Version(), net.IPv4len) }
`})
	b := &Builder{CacheDir: t.TempDir()}
	_, err := b.Build(context.Background(), Request{Node: "server", Pkg: dir})
	if err == nil {
		t.Fatal("a program that calls cgo built for wasip1")
	}
	msg := err.Error()
	for _, want := range []string{"undefined: csql.Version", `example.com/app/csql uses cgo (its files that define what the program calls import "C")`, "modernc.org/sqlite is pure Go but has no wasip1 libc"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "net uses cgo") || strings.Contains(msg, "but not for GOOS=wasip1") {
		t.Errorf("the error blames net, or says only that the package builds natively:\n%s", msg)
	}
}

// A package that builds natively but not for wasip1 gets the hint that
// compat_overlay adds mmap and flock, unless it is on already: then the
// hint says it does not cover what is missing.
func TestNativeHintKnowsCompatIsOn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds syscall for wasip1 with the overlay")
	}
	dir := newModule(t, map[string]string{"main.go": `package main

import (
	"fmt"
	"syscall"
)

func main() {
	var u syscall.Utsname
	fmt.Println(syscall.Uname(&u))
}
`})
	b := &Builder{CacheDir: t.TempDir()}
	for _, compat := range []bool{false, true} {
		_, err := b.Build(context.Background(), Request{Node: "server", Pkg: dir, Compat: compat})
		if err == nil {
			t.Fatalf("compat %v: syscall.Uname built for wasip1", compat)
		}
		want, not := `"compat_overlay": true adds mmap and flock`, "compat_overlay is on, and does not cover it"
		if compat {
			want, not = not, want
		}
		if msg := err.Error(); !strings.Contains(msg, "but not for GOOS=wasip1") || !strings.Contains(msg, want) || strings.Contains(msg, not) {
			t.Errorf("compat %v: the error should say %q, not %q:\n%s", compat, want, not, msg)
		}
	}
}
