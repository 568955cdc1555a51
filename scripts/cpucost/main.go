// Command cpucost measures what a counted call costs in real Go code, to
// choose cpu.ns_per_call (docs/how-it-works.md#cpu-time). It runs typical
// request-handler work: run natively it prints nanoseconds per operation;
// run under seedfall with {"cpu": {"ns_per_call": 1, "jitter": 0}} the
// virtual time per operation is the count of calls it makes. Their ratio
// is the real cost of one counted call. scripts/cpucost/run prints both.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

type order struct {
	ID       int               `json:"id"`
	Customer string            `json:"customer"`
	Items    []item            `json:"items"`
	Tags     map[string]string `json:"tags"`
}

type item struct {
	SKU   string  `json:"sku"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

var sample = order{ID: 42, Customer: "ada@example.com",
	Items: []item{{"A-1", 2, 9.5}, {"B-22", 1, 120}, {"C-333", 7, 0.25}},
	Tags:  map[string]string{"region": "eu", "tier": "gold", "channel": "web"}}

var sink int

var workloads = []struct {
	name string
	fn   func()
}{
	{"json round trip of an order", func() {
		b, _ := json.Marshal(sample)
		var o order
		json.Unmarshal(b, &o)
		sink += len(b) + o.ID
	}},
	{"parse and format a request line", func() {
		line := fmt.Sprintf("PUT key-%d %d\n", sink%1000, sink)
		f := strings.Fields(line)
		n, _ := strconv.Atoi(f[2])
		sink += n + len(f[1])
	}},
	{"map of 100 keys: insert and look up", func() {
		m := make(map[string]int)
		for i := 0; i < 100; i++ {
			m["k"+strconv.Itoa(i)] = i
		}
		for i := 0; i < 100; i++ {
			sink += m["k"+strconv.Itoa(i)]
		}
	}},
	{"sha256 of 4 KiB", func() {
		var b [4096]byte
		b[0] = byte(sink)
		s := sha256.Sum256(b[:])
		sink += int(s[0])
	}},
	{"sort 200 strings", func() {
		s := make([]string, 200)
		for i := range s {
			s[i] = strconv.Itoa((i * 7919) % 200)
		}
		sort.Strings(s)
		sink += len(s[0])
	}},
	{"build a 1 KiB response", func() {
		var b bytes.Buffer
		for i := 0; i < 32; i++ {
			fmt.Fprintf(&b, "line %d of the answer\n", i)
		}
		sink += b.Len()
	}},
}

// main prints, for each workload, the least time per operation over five
// rounds of 2000: the least is the one the machine's other load spoiled
// least.
func main() {
	const n, rounds = 2000, 5
	for _, w := range workloads {
		w.fn() // warm up
		best := int64(-1)
		for r := 0; r < rounds; r++ {
			start := time.Now()
			for i := 0; i < n; i++ {
				w.fn()
			}
			if d := time.Since(start).Nanoseconds(); best < 0 || d < best {
				best = d
			}
		}
		fmt.Printf("%s\t%.1f\n", w.name, float64(best)/n)
	}
}
