// Command serverv2 is the counter service with on-disk format v2
// (snapshot plus checksummed log). Started over a v1 disk it migrates the
// v1 log, request ids included, so deduplication holds across the upgrade.
package main

import (
	"flag"
	"log"
	"os"
	"time"

	"github.com/seedfall/seedfall/examples/liveness/internal/counter"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	listen := flag.String("listen", ":7000", "address to serve on")
	dir := flag.String("dir", "data", "directory of the counter's files")
	dedup := flag.Bool("dedup", false, "apply each client's request id once, even across restarts")
	slow := flag.Duration("slow-reply", 500*time.Millisecond, "how long buggify's slow path holds an answer")
	flag.Parse()
	log.SetFlags(0)
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatalf("server: %v", err)
	}
	st, err := counter.OpenV2(*dir)
	if err != nil {
		log.Fatalf("server: opening %s: %v", *dir, err)
	}
	note := ""
	if st.Migrated != "" {
		note = " (" + st.Migrated + ")"
		sim.Reachable("the v1->v2 migration ran", map[string]any{"migrated": st.Migrated})
	}
	s := &counter.Server{Store: st, Dedup: *dedup, SlowReply: *slow}
	log.Fatalf("server: %v", s.ListenAndServe(*listen, note))
}
