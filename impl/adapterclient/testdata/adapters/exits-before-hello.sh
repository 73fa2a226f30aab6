#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it exits before its hello, with a Python-like error on stderr.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo "ModuleNotFoundError: No module named 'redis'" >&2
exit 1
