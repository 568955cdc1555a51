// Package results is seedfall's one model of a sweep's results, which the
// CLI, the MCP server, Starlark, the go test helper and the HTML report
// share: the result line of a seed (Line, one JSON schema, versioned by
// LineSchema), a seed's record as a sweep prints and keeps it (Record), the
// results directory that run -out writes and merge reads (Writer, Dir,
// Set), shards of a seed list (Shard), triage of failures against a
// baseline (Findings, Baseline, Triage), property coverage over a sweep
// (Coverage) and the JUnit file (JUnit).
//
// It imports the engine and its data packages, never Starlark, the REPL or
// the CLI.
package results
