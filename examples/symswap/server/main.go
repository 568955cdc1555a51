// Command server publishes a new generation of its state every -every: it writes
// gen-N, fsyncs it, points a new symlink at it and renames that symlink over
// "current", then removes gen-(N-2). Readers follow "current".
//
// Protocol, one line each way: GET -> "GEN <n>" or "ERR <message>".
//
// It never fsyncs its directory unless -sync-dir is set. That is safe on a
// journaling file system such as ext4, which persists directory operations in
// order, and not on one that may persist the rename without the create before
// it (ext2, btrfs): that is the bug this example exists to show.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

type state struct {
	mu     sync.Mutex
	gen    int
	broken error // what recovery found, if "current" does not lead to its generation
}

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	every := flag.Duration("every", 50*time.Millisecond, "how often to publish a generation")
	syncDir := flag.Bool("sync-dir", false, "fsync the directory after creating each generation's file (the fix)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")

	s := &state{}
	s.gen, s.broken = recoverCurrent()
	if s.broken != nil {
		log.Printf("recovery: %v", s.broken)
	} else {
		log.Printf("recovered generation %d", s.gen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, sync-dir %v", ln.Addr(), *syncDir)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				log.Fatal(err)
			}
			go serve(s, c)
		}
	}()
	if s.broken != nil {
		select {} // keep answering ERR: the state is gone
	}
	for range time.Tick(*every) {
		s.mu.Lock()
		next := s.gen + 1
		s.mu.Unlock()
		if err := publish(next, *syncDir); err != nil {
			log.Fatalf("publish generation %d: %v", next, err)
		}
		s.mu.Lock()
		s.gen = next
		s.mu.Unlock()
	}
}

func name(gen int) string { return fmt.Sprintf("gen-%d", gen) }

func content(gen int) string { return fmt.Sprintf("generation %d\n", gen) }

// recoverCurrent follows "current" to the generation it names and checks it.
// No "current" at all is a fresh start.
func recoverCurrent() (int, error) {
	target, err := os.Readlink("current")
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("readlink current: %w", err)
	}
	var gen int
	if _, err := fmt.Sscanf(target, "gen-%d", &gen); err != nil {
		return 0, fmt.Errorf("current points at %q, which is not a generation", target)
	}
	b, err := os.ReadFile("current")
	if err != nil {
		return 0, fmt.Errorf("current points at %s: %w", target, err)
	}
	if string(b) != content(gen) {
		return 0, fmt.Errorf("current points at %s, which holds %q", target, b)
	}
	return gen, nil
}

// publish makes generation gen current.
func publish(gen int, syncDir bool) error {
	f, err := os.OpenFile(name(gen), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content(gen)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if syncDir {
		// Make the new file's name durable before anything can point at it.
		d, err := os.Open(".")
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return err
		}
	}
	os.Remove("current.tmp")
	if err := os.Symlink(name(gen), "current.tmp"); err != nil {
		return err
	}
	if err := os.Rename("current.tmp", "current"); err != nil {
		return err
	}
	if err := os.Remove(name(gen - 2)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func serve(s *state, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		reply := "ERR expected GET"
		if strings.TrimSpace(sc.Text()) == "GET" {
			s.mu.Lock()
			if s.broken != nil {
				reply = "ERR " + s.broken.Error()
			} else {
				reply = fmt.Sprintf("GEN %d", s.gen)
			}
			s.mu.Unlock()
		}
		if _, err := io.WriteString(c, reply+"\n"); err != nil {
			return
		}
	}
}
