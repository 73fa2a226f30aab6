#!/usr/bin/env bash
# A cross-host run on one machine (docs/backends.md#several-client-hosts):
# one redis-server that this script starts, two lockbench processes as two
# client hosts against it at once (--backend external --shared-keys), the
# second with its history clock skewed as if its host's clock ran ahead,
# then `lockbench check` of both histories on the server's timeline.
#
# Usage: scripts/crosshost.sh STRATEGY SCENARIO [RUN FLAGS...]
#   e.g. scripts/crosshost.sh token-lua gc-pause
#        scripts/crosshost.sh token-lua baseline --ttl 200ms --duration 3s
#   RUN FLAGS go to both lockbench run commands (workload flags such as
#   --clients, --ttl, --duration).
# Environment (all optional):
#   LOCKBENCH_BIN   lockbench (default: bin/lockbench of this checkout)
#   LOCKBENCH_OUT   results folder (default: lockbench-out/crosshost): host-a/, host-b/
#   LOCKBENCH_SKEW  host B's --clock-skew (default: 50ms; 0: none)
#   LOCKBENCH_SEED  host A's seed (default: 1); host B's is one more
# Exit codes: the cross-host check's (lockbench check H1 H2): 0 as the
# verdict table expects across hosts, 1 not, 4 inconclusive; 2 usage; 3 no
# redis-server or a host's run could not run (its own exit 2 or 3).
# The redis-server is stopped when the script ends, also on Ctrl-C.
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 STRATEGY SCENARIO [RUN FLAGS...] (e.g. $0 token-lua gc-pause)" >&2
	exit 2
fi
strategy=$1 scenario=$2
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
bin=${LOCKBENCH_BIN:-$src/bin/lockbench}
out=${LOCKBENCH_OUT:-lockbench-out/crosshost}
skew=${LOCKBENCH_SKEW:-50ms}
seed=${LOCKBENCH_SEED:-1}
if [ ! -x "$bin" ]; then
	echo "crosshost: no lockbench at $bin: run make build (or set LOCKBENCH_BIN)" >&2
	exit 2
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	echo "crosshost: redis-server and redis-cli are needed on PATH (scripts/deps.sh installs them)" >&2
	exit 3
fi

# 1. One redis-server on a free loopback port, in a folder of its own.
dir=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for _ in 1 2 3 4 5 6 7 8 9 10; do
	port=$((20000 + RANDOM % 30000))
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	redis-cli -p "$port" ping >/dev/null 2>&1 && break
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
done
if [ -z "$pid" ]; then
	echo "crosshost: no redis-server came up on a free port (see its log: $(tail -1 "$dir/redis.log"))" >&2
	exit 3
fi
addr=127.0.0.1:$port

# 2. Two hosts at once on the same keys; B's clock skewed.
rm -rf "$out/host-a" "$out/host-b"
mkdir -p "$out"
common=(run --strategy "$strategy" --scenario "$scenario" --backend external --redis-addrs "$addr" --shared-keys --quiet "$@")
skewflag=()
[ "$skew" != 0 ] && skewflag=(--clock-skew "$skew")
echo "crosshost: host A and host B (--clock-skew $skew) run $strategy/$scenario against $addr" >&2
"$bin" "${common[@]}" --seed "$seed" --out "$out/host-a" >"$out/host-a.log" 2>&1 &
a=$!
"$bin" "${common[@]}" --seed "$((seed + 1))" "${skewflag[@]}" --out "$out/host-b" >"$out/host-b.log" 2>&1 &
b=$!
rca=0 rcb=0
wait "$a" || rca=$?
wait "$b" || rcb=$?
# A host's own verdict may differ from the cross-host one (its pause may
# have been landed on by the other host's clients, which its own history
# does not hold); only a run that could not run stops here.
for h in "a $rca" "b $rcb"; do
	set -- $h
	echo "crosshost: host $1's own check: exit $2 ($out/host-$1.log)" >&2
	if [ "$2" -eq 2 ] || [ "$2" -eq 3 ]; then
		cat "$out/host-$1.log" >&2
		exit 3
	fi
done

# 3. Both histories on the server's timeline.
echo "+ $bin check $out/host-a/histories/*.jsonl $out/host-b/histories/*.jsonl" >&2
rc=0
"$bin" check "$out"/host-a/histories/*.jsonl "$out"/host-b/histories/*.jsonl || rc=$?
exit "$rc"
