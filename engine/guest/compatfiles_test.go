package guest

import (
	"context"
	"strings"
	"testing"
)

// A program that calls mmap or flock builds with compat_overlay; without
// it, the compiler's error comes with a hint that names the setting.
func TestCompatOverlayBuildsFlock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds syscall for wasip1 with the overlay")
	}
	dir := newModule(t, map[string]string{"main.go": `package main

import (
	"fmt"
	"syscall"
)

func main() {
	fmt.Println(syscall.LOCK_EX|syscall.LOCK_NB, syscall.PROT_READ, syscall.MAP_SHARED, syscall.Flock != nil, syscall.Mmap != nil)
}
`})
	b := &Builder{CacheDir: t.TempDir()}
	_, err := b.Build(context.Background(), Request{Node: "server", Pkg: dir})
	if err == nil {
		t.Fatal("built without compat_overlay")
	}
	for _, want := range []string{"undefined: syscall.LOCK_EX", `set "compat_overlay": true in the world file (docs/compat.md)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	art, err := b.Build(context.Background(), Request{Node: "server", Pkg: dir, Compat: true})
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Build(context.Background(), Request{Node: "server", Pkg: dir, Compat: true})
	if err != nil || !again.Cached || again.Hash != art.Hash {
		t.Errorf("second build: cached %v, same hash %v, %v", again != nil && again.Cached, again != nil && again.Hash == art.Hash, err)
	}
}
