#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: its first line is not JSON.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo "starting adapter v1.2 ..."
read -r line
