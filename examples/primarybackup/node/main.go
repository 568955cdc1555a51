// Command node is one replica of a primary/backup key-value store over HTTP.
//
// Two replicas, each knowing the other (-peer). One is primary at a time,
// under an epoch number: the primary sends the backup a heartbeat every
// 50ms, and a backup that hears nothing for 300ms promotes itself with a
// higher epoch. A replica that learns of a higher epoch steps down.
//
// With -replicate=async the primary applies a write, answers the client,
// and forwards the write to the backup in the background: a write the
// backup never got is lost when its primary steps down and copies the new
// primary's data (a stale primary during a partition keeps acknowledging
// writes its successor never sees). With -replicate=sync the primary
// answers only once the backup has the write, so every acknowledged write
// is on both replicas and a replica that steps down keeps what it has.
//
// Endpoints: PUT /kv/<key> (body: value), GET /kv/<key> (primary only; 409
// otherwise), and the replicas' own /replicate, /heartbeat and /snapshot.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type replica struct {
	me, peer string // "name:port"
	id       int64  // 0 or 1: epochs are unique per replica (epoch%2 == id)
	sync     bool
	client   *http.Client

	mu        sync.Mutex
	epoch     int64
	primary   bool
	lastHeard time.Time
	data      map[string]string
}

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	me := flag.String("me", "", "this replica's address as the peer dials it")
	peer := flag.String("peer", "", "the other replica's address")
	mode := flag.String("replicate", "async", "async (the bug) or sync (the fix)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(*me + ": ")
	r := &replica{me: *me, peer: *peer, sync: *mode == "sync", data: map[string]string{},
		client: &http.Client{Timeout: 200 * time.Millisecond}, lastHeard: time.Now()}
	if *me > *peer {
		r.id = 1
	}
	// The replica with the smaller address starts as primary of epoch 2.
	r.epoch = 2
	r.primary = r.id == 0
	mux := http.NewServeMux()
	mux.HandleFunc("/kv/", r.kv)
	mux.HandleFunc("/replicate", r.replicate)
	mux.HandleFunc("/heartbeat", r.heartbeat)
	mux.HandleFunc("/snapshot", r.snapshot)
	go r.loop()
	log.Printf("serving on %s, replicate=%s, primary=%v", *listen, *mode, r.primary)
	if err := http.ListenAndServe(*listen, mux); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// loop sends heartbeats as primary and watches for them as backup.
func (r *replica) loop() {
	for range time.Tick(50 * time.Millisecond) {
		r.mu.Lock()
		primary, epoch := r.primary, r.epoch
		if !primary && time.Since(r.lastHeard) > 300*time.Millisecond {
			r.epoch = (r.epoch/2+1)*2 + r.id
			r.primary = true
			log.Printf("no heartbeat for 300ms: primary of epoch %d", r.epoch)
		}
		r.mu.Unlock()
		if !primary {
			continue
		}
		resp, err := r.client.Get(fmt.Sprintf("http://%s/heartbeat?epoch=%d", r.peer, epoch))
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusConflict {
			newer, _ := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
			r.stepDown(newer)
		}
	}
}

// stepDown makes this replica the backup of a newer epoch and copies the
// new primary's data, replacing its own.
func (r *replica) stepDown(epoch int64) {
	r.mu.Lock()
	if epoch <= r.epoch && !r.primary {
		r.mu.Unlock()
		return
	}
	r.epoch, r.primary, r.lastHeard = max(r.epoch, epoch), false, time.Now()
	r.mu.Unlock()
	if r.sync {
		// Every acknowledged write is on both replicas already. Copying a
		// snapshot here would even be wrong: it can be older than a write
		// replicated to us while it was on its way.
		log.Printf("epoch %d is newer: stepping down", epoch)
		return
	}
	log.Printf("epoch %d is newer: stepping down, copying the primary's data", epoch)
	resp, err := r.client.Get("http://" + r.peer + "/snapshot")
	if err != nil {
		return // the next heartbeat comes with the data's owner; the backup copies on writes
	}
	defer resp.Body.Close()
	var snap map[string]string
	if json.NewDecoder(resp.Body).Decode(&snap) == nil {
		r.mu.Lock()
		r.data = snap
		r.mu.Unlock()
	}
}

func (r *replica) kv(w http.ResponseWriter, req *http.Request) {
	key := strings.TrimPrefix(req.URL.Path, "/kv/")
	r.mu.Lock()
	primary, epoch := r.primary, r.epoch
	r.mu.Unlock()
	if !primary {
		http.Error(w, "not primary", http.StatusConflict)
		return
	}
	switch req.Method {
	case http.MethodGet:
		r.mu.Lock()
		v, ok := r.data[key]
		r.mu.Unlock()
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, v)
	case http.MethodPut:
		b, _ := io.ReadAll(req.Body)
		val := string(b)
		if !r.sync {
			r.mu.Lock()
			r.data[key] = val
			r.mu.Unlock()
			go r.forward(epoch, key, val)
			fmt.Fprint(w, "OK")
			return
		}
		if err := r.forward(epoch, key, val); err != nil {
			http.Error(w, "backup unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		r.mu.Lock()
		ok := r.primary && r.epoch == epoch
		if ok {
			r.data[key] = val
		}
		r.mu.Unlock()
		if !ok {
			http.Error(w, "not primary", http.StatusConflict)
			return
		}
		fmt.Fprint(w, "OK")
	default:
		http.Error(w, "PUT or GET", http.StatusMethodNotAllowed)
	}
}

// forward sends a write to the backup.
func (r *replica) forward(epoch int64, key, val string) error {
	u := fmt.Sprintf("http://%s/replicate?epoch=%d&key=%s", r.peer, epoch, url.QueryEscape(key))
	resp, err := r.client.Post(u, "text/plain", strings.NewReader(val))
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		newer, _ := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
		r.stepDown(newer)
		return fmt.Errorf("epoch %d is newer", newer)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("backup answered %s", resp.Status)
	}
	return nil
}

// fresh takes a message of the sender's epoch: it answers 409 with its own
// epoch when the sender is stale, and steps down to a newer epoch.
func (r *replica) fresh(w http.ResponseWriter, req *http.Request) bool {
	epoch, _ := strconv.ParseInt(req.URL.Query().Get("epoch"), 10, 64)
	r.mu.Lock()
	mine := r.epoch
	switch {
	case epoch < mine:
		r.mu.Unlock()
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, mine)
		return false
	case epoch > mine && r.primary:
		r.mu.Unlock()
		r.stepDown(epoch)
		r.mu.Lock()
	case epoch > mine:
		r.epoch = epoch
	}
	r.lastHeard = time.Now()
	r.mu.Unlock()
	return true
}

func (r *replica) heartbeat(w http.ResponseWriter, req *http.Request) {
	if r.fresh(w, req) {
		fmt.Fprint(w, "OK")
	}
}

func (r *replica) replicate(w http.ResponseWriter, req *http.Request) {
	if !r.fresh(w, req) {
		return
	}
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.data[req.URL.Query().Get("key")] = string(b)
	r.mu.Unlock()
	fmt.Fprint(w, "OK")
}

func (r *replica) snapshot(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	b, _ := json.Marshal(r.data)
	r.mu.Unlock()
	w.Write(b)
}
