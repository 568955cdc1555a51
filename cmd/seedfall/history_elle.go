package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/elle"
	"github.com/seedfall/seedfall/engine/world"
)

func init() {
	register(command{"history", "-model list-append|rw-register [-json] [-consistency-models M1,M2] [-time-limit 30s] FILE", historyCmd})
	descriptions["history"] = "Check a history of transactions, as Jepsen's Elle does: find the isolation anomalies it shows (cycles of write, read and anti-dependencies; aborted, intermediate and internal reads; lost updates...), explain each, and say which consistency models they rule out. FILE is a Jepsen or elle-cli history in JSON: one op per line, or an array. Exit status 0 when the history is valid for the models, 1 when it is not, 2 when it cannot be read or the check is inconclusive."
}

// historyTextMax is how many instances of each anomaly type the text
// output shows (-json shows elle.DefaultMaxAnomalies).
const historyTextMax = 5

// historyCmd checks a transactional history with engine/elle and prints
// the verdict, the anomalies explained, and the models ruled out.
func historyCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("history", stderr)
	model := fs.String("model", "", "the workload: list-append (appends to lists, reads of whole lists) or rw-register (writes and reads of registers); default: the one the history's micro-operations show")
	asJSON := fs.Bool("json", false, "print one JSON object: valid (true, false or \"unknown\"), anomaly_types, anomalies, not, also-not, ...")
	models := fs.String("consistency-models", "strict-serializable", "the `models` the history should satisfy, by Elle's names, comma-separated (serializable, snapshot-isolation, repeatable-read, read-committed, ...)")
	limit := fs.Duration("time-limit", 0, "stop the check after this long and print what it found so far (default: no limit)")
	var files []string
	for {
		if err := parseArgs(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files, args = append(files, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case len(files) == 0:
		return fmt.Errorf("say which history to check: seedfall history -model list-append FILE")
	case len(files) > 1:
		return fmt.Errorf("check one history at a time, not %d (%s)", len(files), strings.Join(files, ", "))
	}
	workloads := []string{"list-append", "rw-register"}
	if *model != "" && !slices.Contains(workloads, *model) {
		msg := fmt.Sprintf("unknown -model %q: want list-append or rw-register", *model)
		if s := world.Suggest(*model, workloads); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return errors.New(msg)
	}
	var ms []string
	for _, m := range strings.Split(*models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return fmt.Errorf("-consistency-models is empty: name at least one model, such as serializable")
	}
	if err := elle.ValidateModels(ms); err != nil {
		return fmt.Errorf("-consistency-models: %v", err)
	}
	if *limit < 0 {
		return fmt.Errorf("-time-limit %v is negative: give a duration such as 30s, or 0 for none", *limit)
	}
	// main collects garbage seldom, for the runs' sake; a check keeps
	// its history and graph, and collects as usual so that its memory
	// stays a few times the history's.
	debug.SetGCPercent(100)
	file := files[0]
	h, err := elle.ReadFile(file)
	if err != nil {
		return err
	}
	if *model == "" {
		if *model, err = detectWorkload(h); err != nil {
			return err
		}
	}
	opts := elle.Options{ConsistencyModels: ms}
	if *limit > 0 {
		opts.Deadline = time.Now().Add(*limit)
	}
	check := elle.CheckListAppend
	if *model == "rw-register" {
		check = elle.CheckRWRegister
	}
	r, err := check(h, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		out := struct {
			File  string `json:"file"`
			Model string `json:"model"`
			*elle.Result
		}{file, *model, r}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		writeHistoryText(stdout, file, *model, r, *limit)
	}
	switch r.Valid {
	case elle.Valid:
		return nil
	case elle.Invalid:
		return errFailed
	}
	return errors.New(inconclusive(r, *limit))
}

// detectWorkload names the workload a history's writes show.
func detectWorkload(h *elle.History) (string, error) {
	for _, op := range h.Ops {
		for _, m := range op.Value {
			switch m.F {
			case elle.Append:
				return "list-append", nil
			case elle.Write:
				return "rw-register", nil
			}
		}
	}
	return "", fmt.Errorf("%s has no append or write to tell its workload by: say which, -model list-append or -model rw-register", h.Name)
}

// inconclusive says why a check could not decide.
func inconclusive(r *elle.Result, limit time.Duration) string {
	switch {
	case r.Incomplete:
		return fmt.Sprintf("inconclusive: the check did not finish within -time-limit %v and found nothing the models forbid before it stopped; give it more time", limit)
	case slices.Contains(r.AnomalyTypes, "cycle-search-timeout"):
		return "inconclusive: the search for cycles stopped at its budget in a large tangle of dependencies (cycle-search-timeout); the models may still be violated"
	case slices.Contains(r.AnomalyTypes, "empty-transaction-graph"):
		return "inconclusive: no transaction depends on another, so nothing could be inferred (do the reads see what was written?)"
	}
	return "inconclusive"
}

// writeHistoryText prints a check's result for a person: the verdict, each
// anomaly type with its instances explained, and the models ruled out.
func writeHistoryText(w io.Writer, file, model string, r *elle.Result, limit time.Duration) {
	models := strings.Join(r.Models, ", ")
	switch r.Valid {
	case elle.Valid:
		fmt.Fprintf(w, "%s: valid: no anomaly that %s forbids (%s, %s, %s)\n", file, models, model,
			plural(r.Transactions, "transaction"), dependencies(r.Edges))
	case elle.Invalid:
		fmt.Fprintf(w, "%s: not valid for %s: %s (%s, %s, %s)\n", file, models, strings.Join(r.AnomalyTypes, ", "), model,
			plural(r.Transactions, "transaction"), dependencies(r.Edges))
	default:
		fmt.Fprintf(w, "%s: %s\n", file, inconclusive(r, limit))
	}
	if r.Incomplete && r.Valid == elle.Invalid {
		fmt.Fprintf(w, "The check stopped at -time-limit %v: there may be more than these.\n", limit)
	}
	for _, t := range r.AnomalyTypes {
		as := r.Anomalies[t]
		n := r.Counts[t]
		fmt.Fprintf(w, "\n%s (%d found", t, n)
		if n > historyTextMax {
			fmt.Fprintf(w, ", %d shown; -json shows up to %d", historyTextMax, elle.DefaultMaxAnomalies)
			as = as[:historyTextMax]
		}
		fmt.Fprintf(w, "):\n")
		for i, a := range as {
			text := a.Explanation
			if strings.Contains(text, "\n") {
				// A cycle: its transactions, then why each precedes the next.
				if i > 0 {
					fmt.Fprintln(w)
				}
				for _, line := range strings.Split(text, "\n") {
					fmt.Fprintln(w, strings.TrimRight("  "+line, " "))
				}
				continue
			}
			fmt.Fprintf(w, "  - %s\n", text)
		}
	}
	if len(r.Not) > 0 {
		fmt.Fprintf(w, "\nNot: %s\n", strings.Join(r.Not, ", "))
	}
	if len(r.AlsoNot) > 0 {
		fmt.Fprintf(w, "Also not: %s\n", strings.Join(r.AlsoNot, ", "))
	}
	if len(r.Possible) > 0 && r.Valid == elle.Invalid {
		fmt.Fprintf(w, "Strongest still possible: %s\n", strings.Join(r.Possible, ", "))
	}
}

func dependencies(n int) string {
	if n == 1 {
		return "1 dependency"
	}
	return fmt.Sprintf("%d dependencies", n)
}
