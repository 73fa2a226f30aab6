#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it writes nothing and hangs.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
sleep 30
