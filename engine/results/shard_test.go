package results

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// The shards of a list hold each of its seeds once, in the list's order,
// seed i (from 0) in shard i mod N + 1, and count says how many.
func TestShardsPartitionTheList(t *testing.T) {
	for _, spec := range []string{"1-9", "7", "2-3,9,40-45,5", "1-2"} {
		list, err := engine.ParseSeeds(spec)
		if err != nil {
			t.Fatal(err)
		}
		all := slices.Collect(list.All())
		for n := 1; n <= 5; n++ {
			var union []uint64
			for k := 1; k <= n; k++ {
				sh, err := ParseShard(fmt.Sprintf("%d/%d", k, n), nil)
				if err != nil {
					t.Fatal(err)
				}
				got := slices.Collect(sh.Seeds(list))
				var want []uint64
				for i, seed := range all {
					if i%n == k-1 {
						want = append(want, seed)
					}
				}
				if !slices.Equal(got, want) || sh.Count(list.Len()) != len(want) {
					t.Errorf("-seeds %s -shard %d/%d: %v (count %d), want %v", spec, k, n, got, sh.Count(list.Len()), want)
				}
				union = append(union, got...)
			}
			slices.Sort(union)
			sorted := slices.Sorted(slices.Values(all))
			if !slices.Equal(union, sorted) {
				t.Errorf("-seeds %s in %d shards: the union is %v, want %v", spec, n, union, sorted)
			}
		}
	}
}

func TestParseShardErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"0/3":  "-shard 0/3: K counts shards from 1 to N: use 1/3 to 3/3",
		"4/3":  "-shard 4/3: K counts shards from 1 to N: use 1/3 to 3/3",
		"a/b":  `-shard "a/b": write K/N, the K-th of N shards, such as 2/3`,
		"3":    `-shard "3": write K/N`,
		"1/0":  "-shard 1/0: N is the number of shards, at least 1",
		"-1/2": "-shard -1/2: K counts shards from 1 to N",
	} {
		_, err := ParseShard(spec, nil)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("-shard %s: %v, want %q", spec, err, want)
		}
	}
}

func TestShardAuto(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		k, n int
		err  string
	}{
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MAX": "2"}, k: 3, n: 3},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "3"}, k: 2, n: 3},
		// Slurm before Kubernetes, when both are there.
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "2", "JOB_COMPLETION_INDEX": "1", "SEEDFALL_SHARD_COUNT": "4"}, k: 1, n: 2},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "0", "SEEDFALL_SHARD_COUNT": "4"}, k: 1, n: 4},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "3", "SEEDFALL_SHARD_COUNT": "4"}, k: 4, n: 4},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "3"},
			err: "-shard auto: SLURM_ARRAY_TASK_ID set but not SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT: run seedfall as a task of a Slurm job array"},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MAX": "7"},
			err: "-shard auto: the Slurm array's task IDs are not consecutive"},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"},
			err: `-shard auto: SLURM_ARRAY_TASK_ID="x" is not a number`},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "1"},
			err: "-shard auto: JOB_COMPLETION_INDEX is set but SEEDFALL_SHARD_COUNT is not: set it in the Job's container env to the Job's .spec.completions"},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "4", "SEEDFALL_SHARD_COUNT": "4"},
			err: "-shard auto: JOB_COMPLETION_INDEX=4, SEEDFALL_SHARD_COUNT=4: the index must be below the count"},
		{env: map[string]string{},
			err: "-shard auto: found neither a Slurm array task (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, SEEDFALL_SHARD_COUNT); give -shard K/N"},
	} {
		sh, err := ParseShard("auto", func(k string) string { return c.env[k] })
		switch {
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%v: %v, want %q", c.env, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case c.err == "" && (sh.K != c.k || sh.N != c.n):
			t.Errorf("%v: shard %s, want %d/%d", c.env, sh, c.k, c.n)
		}
	}
}
