package proto

import (
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// build builds a main package of the given files with the pause overlay,
// idle pauses on, and the fsync and net overlays (BuildGuest).
func build(t testing.TB, files map[string]string) []byte {
	t.Helper()
	return BuildGuest(t, pauseoverlay.Options{Idle: true}, files, fsyncoverlay.Files, netoverlay.Files)
}

// testMain is every test's guest, its part chosen by the first argument:
// "sleeper", "server", "client" (world_test.go), or anything else for the
// default. Package init builds a map; unless the guest is one of the
// world's, init also prints. The default prints its arguments and a sum
// over init's map.
const testMain = `package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

var table = build()

func build() map[string]int {
	m := map[string]int{}
	for i := 0; i < 1000; i++ {
		m[fmt.Sprint("k", i)] = i * i
	}
	if len(os.Args) < 2 || !slices.Contains([]string{"sleeper", "server", "client"}, os.Args[1]) {
		fmt.Println("init: built", len(m))
	}
	return m
}

func main() {
	switch arg := append(os.Args, "")[1]; arg {
	case "sleeper":
		sleeper()
	case "server":
		server()
	case "client":
		client(os.Args[2])
	default:
		sum := 0
		for _, v := range table {
			sum += v
		}
		fmt.Printf("main: args=%s sum=%d k7=%d\n", strings.Join(os.Args[1:], ","), sum, table["k7"])
	}
}
`

// guestWasm is testMain and worldGo, built once.
var guestWasm []byte

func buildGuest(t testing.TB) []byte {
	t.Helper()
	if guestWasm == nil {
		guestWasm = build(t, map[string]string{"main.go": testMain, "world.go": worldGo})
	}
	return guestWasm
}

// compiled is shared by the tests' runtimes: each module compiles once.
var compiled = wazero.NewCompilationCache()
