# The tally tests/install's scripts keep, sourced by each: one line per check, "ok NAME" or "FAIL NAME: why"
# followed by the tail of each log that tells why, and the closing line scripts/run-tests reads,
# "checks: P passed, F failed, 0 skipped". Logs under $scratch are named relative to it.
passed=0
failed=0

pass() { echo "ok $1"; passed=$((passed + 1)); }

fail() { # name why [log...]: the tail of each log that exists and is not empty
  local name=$1 why=$2 f
  shift 2
  echo "FAIL $name: $why"
  for f in "$@"; do
    [ -s "$f" ] || continue
    echo "    --- tail of ${f#"${scratch:-}"/}"
    tail -n 30 "$f" | sed 's/^/    | /'
  done
  failed=$((failed + 1))
}

# The closing line; true when nothing failed.
checks_line() {
  echo "checks: $passed passed, $failed failed, 0 skipped"
  [ "$failed" -eq 0 ]
}
