#!/bin/sh
# A broken adapter for impl's TestBadAdapters: it writes nothing and hangs.
echo $$ >>"$PIDFILE"
sleep 30
