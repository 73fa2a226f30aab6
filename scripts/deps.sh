#!/usr/bin/env bash
# Installs what lockbench needs at run time when it is missing: redis-server,
# redis-sentinel (Sentinel scenarios), gcc (the clock-offset shim),
# ZooKeeper with a JVM (the zk-* strategies) and python3-redis (the redis-py
# adapter, adapters/redis-py), with apt-get when we are root on
# a Debian/Ubuntu machine. etcd is built by the Makefile (make etcd). Otherwise it names the
# packages to install and exits 3 (lockbench's "environment error" code).
# With --browser (make test) it also installs Debian's chromium, which the
# report test uses to render index.html headless.
set -euo pipefail

missing=()
if [ "${1:-}" = "--browser" ] && [ "${LOCKBENCH_NO_BROWSER:-}" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
fi
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
{ command -v redis-cli && command -v redis-benchmark; } >/dev/null 2>&1 || missing+=(redis-tools) # redis-benchmark: make perf
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
# ZooKeeper's server jar from Debian's zookeeper source package
# (libzookeeper-java: the jar and its dependencies, without the zookeeper
# package's service scripts and full JRE) and a headless JVM.
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
[ -f /usr/share/java/zookeeper.jar ] || missing+=(libzookeeper-java)
# redis-py for adapters/redis-py (exec:redis-py): Debian's, for /usr/bin/python3.
{ python3 -c 'import redis' || /usr/bin/python3 -c 'import redis'; } >/dev/null 2>&1 || missing+=(python3-redis)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: missing ${missing[*]}: installing with apt-get (once; a few minutes on a fresh machine, the JVM for ZooKeeper being the largest part)" >&2
  export DEBIAN_FRONTEND=noninteractive
  SECONDS=0
  echo "deps: apt-get update (usually under a minute)" >&2
  apt-get update -qq >/dev/null
  echo "deps: apt-get update done in ${SECONDS} s; apt-get install ${missing[*]}" >&2
  SECONDS=0
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "deps: installed ${missing[*]} in ${SECONDS} s" >&2
  # Debian's packaged services may start on install; lockbench starts its own servers.
  for s in redis-server redis-sentinel zookeeper; do
    (service "$s" stop || systemctl stop "$s") >/dev/null 2>&1 || true
  done
  exit 0
fi
echo "deps: missing ${missing[*]}: install them (Debian/Ubuntu: sudo apt-get install ${missing[*]}), then rerun" >&2
exit 3
