package realsoft

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/faults"
)

// Every shrunk schedule docs/real-software.md offers as a replay command
// still fails its world, the same way twice: the page's promises hold.
func TestShrunkSchedulesFail(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/real-software.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("`seedfall replay -c examples/real/(\\S+) -seed (\\d+) -faults examples/real/(\\S+)`")
	cmds := re.FindAllStringSubmatch(string(doc), -1)
	if len(cmds) < 10 {
		t.Fatalf("docs/real-software.md names %d replay commands; want every finding's", len(cmds))
	}
	for _, c := range cmds {
		world, schedule := c[1], c[3]
		seed, _ := strconv.ParseUint(c[2], 10, 64)
		t.Run(strings.TrimSuffix(schedule, ".faults.json"), func(t *testing.T) {
			p := prepareFile(t, world)
			sch, err := faults.Load("../../examples/real/"+schedule, checkConfig(p))
			if err != nil {
				t.Fatal(err)
			}
			if sch.Seed != seed {
				t.Errorf("%s is for seed %d; the page says seed %d", schedule, sch.Seed, seed)
			}
			r := twice(t, p, seed, sch)
			if r.Passed {
				t.Errorf("%s seed %d passes with %s:\n%s", world, seed, schedule, output(r, ""))
			}
			// The README shows one of these replays whole.
			if bytes.Contains(readme, []byte(c[0][1:len(c[0])-1]+"\n")) && !bytes.Contains(readme, []byte("digest "+r.Digest+"\n")) {
				t.Errorf("README.md shows %s with another digest than %s", c[0], r.Digest)
			}
		})
	}
}
