package results

import (
	"fmt"
	"iter"
	"os"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// Shard is the part of a seed list one process runs: the K-th of N. The
// seed at position i of the list (from 0, in the list's order) belongs to
// shard i mod N + 1, so every seed is in exactly one shard, and shards of
// one list differ in size by one seed at most. The zero shard is the whole
// list.
type Shard struct {
	K, N int    // 1 <= K <= N; 0 and 0 for the whole list
	From string // where -shard auto found K and N, for the note: "SLURM_ARRAY_TASK_ID=4, ..."
}

// Whole reports whether s is the whole list, not a shard of it.
func (s Shard) Whole() bool { return s.N == 0 }

// String writes "2/3", as -shard takes it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// DirName is the results directory of the shard under a shared -out:
// shard-2-of-3.
func (s Shard) DirName() string { return fmt.Sprintf("shard-%d-of-%d", s.K, s.N) }

// Count is how many seeds of a list of total the shard runs.
func (s Shard) Count(total int) int {
	if s.Whole() {
		return total
	}
	if total < s.K {
		return 0
	}
	return (total-s.K)/s.N + 1
}

// Seeds yields the shard's seeds of list, in the list's order.
func (s Shard) Seeds(list engine.Seeds) iter.Seq[uint64] {
	if s.Whole() {
		return list.All()
	}
	return func(yield func(uint64) bool) {
		i := 0
		for seed := range list.All() {
			if i%s.N == s.K-1 && !yield(seed) {
				return
			}
			i++
		}
	}
}

// ParseShard reads -shard: "K/N", or "auto" for the index and count of a
// Slurm array task or a Kubernetes Indexed Job (shardFromEnv). "" is the
// whole list.
func ParseShard(spec string, getenv func(string) string) (Shard, error) {
	switch spec {
	case "":
		return Shard{}, nil
	case "auto":
		return shardFromEnv(getenv)
	}
	ks, ns, ok := strings.Cut(spec, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	switch {
	case !ok || errK != nil || errN != nil:
		return Shard{}, fmt.Errorf("-shard %q: write K/N, the K-th of N shards, such as 2/3 (or auto, under a Slurm array or a Kubernetes Indexed Job)", spec)
	case n < 1:
		return Shard{}, fmt.Errorf("-shard %s: N is the number of shards, at least 1", spec)
	case k < 1 || k > n:
		return Shard{}, fmt.Errorf("-shard %s: K counts shards from 1 to N: use 1/%d to %d/%d", spec, n, n, n)
	}
	return Shard{K: k, N: n}, nil
}

// The environment -shard auto reads. A Slurm array task has its index as
// SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN and the count as
// SLURM_ARRAY_TASK_COUNT; a Kubernetes Indexed Job has its index (from 0)
// as JOB_COMPLETION_INDEX, and the count, which Kubernetes does not set,
// as SEEDFALL_SHARD_COUNT: set it to the Job's .spec.completions.
var (
	slurmVars = []string{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"}
	k8sVars   = []string{"JOB_COMPLETION_INDEX", "SEEDFALL_SHARD_COUNT"}
)

// shardFromEnv finds the shard of -shard auto: a Slurm array task's, else
// a Kubernetes Indexed Job's, else it says which variables it looked for.
func shardFromEnv(getenv func(string) string) (Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	num := func(name string) (int, error) {
		v := getenv(name)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("-shard auto: %s=%q is not a number of 0 or more", name, v)
		}
		return n, nil
	}
	var set, unset []string
	for _, name := range slurmVars {
		if getenv(name) != "" {
			set = append(set, name)
		} else {
			unset = append(unset, name)
		}
	}
	if len(set) > 0 {
		if len(unset) > 0 {
			return Shard{}, fmt.Errorf("-shard auto: %s set but not %s: run seedfall as a task of a Slurm job array (sbatch --array=0-N), or give -shard K/N",
				strings.Join(set, ", "), strings.Join(unset, ", "))
		}
		id, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return Shard{}, err
		}
		lo, err := num("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return Shard{}, err
		}
		count, err := num("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return Shard{}, err
		}
		from := fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d, SLURM_ARRAY_TASK_MIN=%d, SLURM_ARRAY_TASK_COUNT=%d", id, lo, count)
		// An array such as --array=1,5,7 or --array=0-10:2 has gaps:
		// ID - MIN is then no index from 0 to COUNT-1.
		if hi := getenv("SLURM_ARRAY_TASK_MAX"); hi != "" {
			if h, err := strconv.Atoi(hi); err == nil && h-lo+1 != count {
				return Shard{}, fmt.Errorf("-shard auto: the Slurm array's task IDs are not consecutive (%s, SLURM_ARRAY_TASK_MAX=%d): submit it as --array=0-%d, or give -shard K/N", from, h, count-1)
			}
		}
		switch {
		case count < 1:
			return Shard{}, fmt.Errorf("-shard auto: %s: the array has no tasks", from)
		case id < lo || id-lo >= count:
			return Shard{}, fmt.Errorf("-shard auto: %s: the task ID is not between MIN and MIN+COUNT-1; submit the array as --array=0-%d, or give -shard K/N", from, count-1)
		}
		return Shard{K: id - lo + 1, N: count, From: from}, nil
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		if getenv("SEEDFALL_SHARD_COUNT") == "" {
			return Shard{}, fmt.Errorf("-shard auto: JOB_COMPLETION_INDEX is set but SEEDFALL_SHARD_COUNT is not: set it in the Job's container env to the Job's .spec.completions")
		}
		idx, err := num("JOB_COMPLETION_INDEX")
		if err != nil {
			return Shard{}, err
		}
		count, err := num("SEEDFALL_SHARD_COUNT")
		if err != nil {
			return Shard{}, err
		}
		from := fmt.Sprintf("JOB_COMPLETION_INDEX=%d, SEEDFALL_SHARD_COUNT=%d", idx, count)
		if count < 1 || idx >= count {
			return Shard{}, fmt.Errorf("-shard auto: %s: the index must be below the count; set SEEDFALL_SHARD_COUNT to the Job's .spec.completions", from)
		}
		return Shard{K: idx + 1, N: count, From: from}, nil
	}
	return Shard{}, fmt.Errorf("-shard auto: found neither a Slurm array task (%s) nor a Kubernetes Indexed Job (%s); give -shard K/N",
		strings.Join(slurmVars, ", "), strings.Join(k8sVars, ", "))
}
