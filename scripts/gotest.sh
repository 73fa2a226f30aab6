#!/usr/bin/env bash
# Runs `go test` with the given arguments, shows its output as it comes, and
# when it fails repeats the failing tests' names and messages at the end, so a
# CI log that keeps only its tail still says which test failed and why.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/lockbench-test.XXXXXX")
trap 'rm -f "$log"' EXIT
"${GO:-go}" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo
	echo "=== make test failed (exit $rc). Failing tests and their messages:"
	grep -E -- '--- FAIL|^FAIL|^panic:|_test\.go:[0-9]+:|^ {10,}[^ ]|\[build failed\]|timed out' "$log" |
		grep -v -- '--- PASS' | tail -n 60
fi
exit "$rc"
