package elle

// TransactionalModels lists the models of KnownModels that forbid some
// anomaly of transactions, sorted: those a check of a list-append or
// rw-register history can rule out. The others (linearizable, PRAM,
// view-serializable, ...) forbid nothing such a check finds, so a check
// for them alone always passes: seedfall's world file refuses them.
func TransactionalModels() []string {
	var out []string
	for _, m := range KnownModels() {
		if len(anomaliesProhibitedBy([]string{m})) > 0 {
			out = append(out, m)
		}
	}
	return out
}
