#!/usr/bin/env bash
# Your lock under lockbench in your own CI (docs/ci.md): build lockbench,
# run your adapter through the ci profile's scenarios, gate on the verdicts
# its claims predict, and fail on a significant regression against a saved
# baseline with `lockbench compare`.
#
# Usage: scripts/ci-own-lock.sh ADAPTER BASELINE
#   ADAPTER   the adapter's command (docs/protocol.md), run in the current
#             folder, e.g. 'python3 ci/lock_adapter.py'; or an adapters.conf NAME
#   BASELINE  a results folder saved from an earlier run of this script; when
#             it does not exist yet, this run's results are saved there
# Environment (all optional):
#   LOCKBENCH_SCENARIOS       comma-separated scenarios (default: the ci profile's)
#   LOCKBENCH_OUT             results folder (default: lockbench-out/own-lock)
#   LOCKBENCH_MAX_REGRESSION  largest throughput drop or p99 rise not flagged (default: 10%)
#   LOCKBENCH_SRC             lockbench's source (default: the checkout this script is in)
#   LOCKBENCH_BIN             where lockbench is built (default: $LOCKBENCH_SRC/bin/lockbench)
# Exit codes: lockbench's (docs/ci.md): 0 as expected and no regression,
# 1 an unexpected verdict or a significant regression, 2 usage or a broken
# adapter, 3 environment (no redis-server, machine overloaded), 4
# inconclusive (too little evidence: not a pass).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 ADAPTER BASELINE (e.g. $0 'python3 ci/lock_adapter.py' ci/lockbench-baseline)" >&2
	exit 2
fi
adapter=$1 baseline=$2
src=${LOCKBENCH_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${LOCKBENCH_BIN:-$src/bin/lockbench}
out=${LOCKBENCH_OUT:-lockbench-out/own-lock}
scenarios=(${LOCKBENCH_SCENARIOS:+--scenarios "$LOCKBENCH_SCENARIOS"})

# 1. Build lockbench.
(cd "$src" && go build -o "$bin" ./cmd/lockbench)

# 2. Run the adapter through the scenarios; the exit code gates on the
#    verdicts (expectations from the claims its hello declares).
set -x
"$bin" bench --strategies "exec:$adapter" "${scenarios[@]}" --out "$out" -v
{ set +x; } 2>/dev/null

# 3. Compare with the saved baseline: new violations, lost canaries and
#    significant performance regressions fail.
if [ ! -e "$baseline" ]; then
	echo "ci-own-lock: no baseline at $baseline yet: saving this run there (commit it to compare later runs with it)"
	mkdir -p "$(dirname "$baseline")"
	cp -r "$out" "$baseline"
	exit 0
fi
set -x
"$bin" compare "$baseline" "$out" --max-regression "${LOCKBENCH_MAX_REGRESSION:-10%}"
