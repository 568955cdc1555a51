#!/usr/bin/env bash
# The seedfall GitHub Action's work (action.yml runs it), kept in a script
# so that it runs, and is tested, outside GitHub too (deploy/github/
# action_test.go). It runs a sweep, or one shard of it, or merges the
# shards, writes the JUnit file, the HTML report and the results directory
# into $SEEDFALL_OUT, and says what happened in $GITHUB_OUTPUT and
# $GITHUB_STEP_SUMMARY.
#
# Environment (action.yml sets it from the action's inputs):
#   SEEDFALL_WORLD     the world file (required, except to merge)
#   SEEDFALL_SEEDS     the seeds, as run -seeds takes them (default 1-100)
#   SEEDFALL_SHARDS    into how many shards the sweep is split (default 1)
#   SEEDFALL_SHARD     which one this job runs, 1..SEEDFALL_SHARDS; empty
#                      with SEEDFALL_SHARDS > 1: merge the shards found in
#                      SEEDFALL_SHARD_DIRS
#   SEEDFALL_SHARD_DIRS  where the shards' results are, to merge
#                      (default $SEEDFALL_OUT/shards)
#   SEEDFALL_BASELINE  earlier results (a results directory, or a parent of
#                      shard directories) to triage against; a missing or
#                      empty directory means no baseline yet
#   SEEDFALL_FLAGS     more flags for run or merge, split at blanks
#   SEEDFALL_OUT       where the outputs go (default seedfall-out)
#   SEEDFALL_BIN       the seedfall binary (default: built from the
#                      checkout this script is in)
#   SEEDFALL_NAME      the artifacts' prefix (sweep.sh names)
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY  GitHub's files; unset, nothing is
#                      written there
#
# Exit status: seedfall's. 0: every seed passed, or with a baseline no
# finding is new or regressed; 1: a seed failed, or with a baseline a
# finding is new or regressed; 2: the sweep could not run. A shard exits
# 0 when its seeds ran, failing or not: the merge decides.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${SEEDFALL_OUT:-seedfall-out}
seeds=${SEEDFALL_SEEDS:-1-100}
shards=${SEEDFALL_SHARDS:-1}
shard=${SEEDFALL_SHARD:-}
world=${SEEDFALL_WORLD:-}
github_output=${GITHUB_OUTPUT:-/dev/null}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}

fail() {
  echo "seedfall action: $*" >&2
  echo "exit-code=2" >>"$github_output"
  exit 2
}

# sweep.sh names: the artifacts' names, before anything runs. NAME is
# SEEDFALL_NAME, else seedfall-WORLD, WORLD the world file's name without
# its extension, or for seedfall.json its directory's (seedfall-kvlog),
# or nothing at the root (seedfall); a shard's artifacts are
# NAME-shard-K-of-N-*.
if [ "${1:-}" = names ]; then
  name=${SEEDFALL_NAME:-}
  if [ -z "$name" ]; then
    base=$(basename "${world:-merged}")
    base=${base%.json} base=${base%.toml} base=${base%.star}
    dir=$(basename "$(dirname "${world:-.}")")
    name=seedfall-$base
    if [ "$base" = seedfall ]; then
      name=seedfall
      [ "$dir" != . ] && [ "$dir" != / ] && name=seedfall-$dir
    fi
  fi
  echo "name=$name" >>"$github_output"
  if [ "$shards" != 1 ] && [ -n "$shard" ]; then
    echo "artifact=$name-shard-$shard-of-$shards" >>"$github_output"
  else
    echo "artifact=$name" >>"$github_output"
  fi
  exit 0
fi

case $shards in
  '' | *[!0-9]* | 0) fail "shards: \"$shards\" is not a count of shards (1, 2, ...)" ;;
esac
mode=run
if [ "$shards" -gt 1 ]; then
  mode=merge
  if [ -n "$shard" ]; then
    mode=shard
    case $shard in
      '' | *[!0-9]* | 0) fail "shard: \"$shard\" is not a shard number from 1 to $shards" ;;
    esac
    [ "$shard" -le "$shards" ] || fail "shard: $shard is not a shard number from 1 to $shards"
  fi
elif [ -n "$shard" ] && [ "$shard" != 1 ]; then
  fail "shard: $shard, but shards is $shards: set shards to the number of shards"
fi
if [ "$mode" != merge ] && [ -z "$world" ]; then
  fail "world: say which world file to run"
fi
dirs=${SEEDFALL_SHARD_DIRS:-$out/shards}
if [ "$mode" = merge ] && [ ! -d "$dirs" ]; then
  fail "no shard results at $dirs to merge"
fi

mkdir -p "$out" || fail "cannot make $out"
out=$(cd "$out" && pwd)

seedfall=${SEEDFALL_BIN:-}
if [ -z "$seedfall" ]; then
  seedfall=$out/bin/seedfall
  echo "building seedfall from $(cd "$here/../.." && pwd)"
  (cd "$here/../.." && go build -o "$seedfall" ./cmd/seedfall) || fail "could not build seedfall (is Go 1.26 set up? actions/setup-go)"
fi

baseline=${SEEDFALL_BASELINE:-}
baseline_note=
if [ -n "$baseline" ] && [ "$mode" != shard ]; then
  if [ ! -d "$baseline" ] || [ -z "$(ls -A "$baseline" 2>/dev/null)" ]; then
    baseline_note="no baseline at $baseline yet: every failing seed counts"
    baseline=
  fi
else
  baseline=
fi

# shellcheck disable=SC2206 # extra flags are split at blanks, on purpose
extra=(${SEEDFALL_FLAGS:-})
args=()
case $mode in
  run)
    args=(run -c "$world" -seeds "$seeds" -out "$out/results" -junit "$out/junit.xml" -report "$out/report.html")
    ;;
  shard)
    args=(run -c "$world" -seeds "$seeds" -shard "$shard/$shards" -out "$out/results" -junit "$out/junit.xml")
    ;;
  merge)
    args=(merge -out "$out/results" -junit "$out/junit.xml" -report "$out/report.html")
    ;;
esac
[ -n "$baseline" ] && args+=(-baseline "$baseline")
args+=("${extra[@]}")
[ "$mode" = merge ] && args+=("$dirs")

echo "+ seedfall ${args[*]}"
"$seedfall" "${args[@]}" 2>&1 | tee "$out/output.txt"
status=${PIPESTATUS[0]}

# What happened, for the workflow's later steps.
tests=0 failures=0
if [ -f "$out/junit.xml" ]; then
  head=$(grep -m1 '<testsuites' "$out/junit.xml")
  tests=$(sed -n 's/.* tests="\([0-9]*\)".*/\1/p' <<<"$head")
  failures=$(sed -n 's/.* failures="\([0-9]*\)".*/\1/p' <<<"$head")
fi
triage=$(grep -m1 '^triage against ' "$out/output.txt")
count() { sed -n "s/.* \([0-9]*\) $1.*/\1/p" <<<"$triage"; }
{
  echo "exit-code=$status"
  echo "seeds=${tests:-0}"
  echo "failed=${failures:-0}"
  echo "passed=$((${tests:-0} - ${failures:-0}))"
  echo "new=$(count new)"
  echo "ongoing=$(count ongoing)"
  echo "resolved=$(count resolved)"
  echo "regressed=$(count regressed)"
  echo "results=$out/results"
  echo "junit=$out/junit.xml"
  [ "$mode" != shard ] && echo "report=$out/report.html"
} >>"$github_output"

# The step summary: what ran, the verdict, the triage, the output.
{
  case $mode in
    run) echo "### seedfall: \`$world\`, seeds $seeds" ;;
    shard) echo "### seedfall: \`$world\`, seeds $seeds, shard $shard of $shards" ;;
    merge) echo "### seedfall: $shards shards merged" ;;
  esac
  echo
  case $status in
    0) [ -n "$baseline" ] && echo "**passed**: no new or regressed finding" || echo "**passed**" ;;
    1) if [ "$mode" = shard ]; then echo "**ran**: the merge says whether it passed"
       elif [ -n "$baseline" ]; then echo "**failed**: a new or regressed finding"
       else echo "**failed**"; fi ;;
    *) echo "**could not run** (exit status $status)" ;;
  esac
  echo
  grep -E '^[0-9]+ seeds?: ' "$out/output.txt" | tail -1
  [ -n "$baseline_note" ] && echo && echo "$baseline_note"
  if [ -n "$triage" ]; then
    echo
    echo '```'
    awk '/^triage against /{on=1; print; next} on && /^  /{print; next} {on=0}' "$out/output.txt"
    echo '```'
  fi
  echo
  echo '<details><summary>output</summary>'
  echo
  echo '```'
  head -n 300 "$out/output.txt"
  [ "$(wc -l <"$out/output.txt")" -gt 300 ] && echo "... (the whole output is in the artifact)"
  echo '```'
  echo '</details>'
} >>"$summary"

if [ "$mode" = shard ] && [ "$status" = 1 ]; then
  exit 0
fi
exit "$status"
