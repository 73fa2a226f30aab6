#!/bin/sh
# A broken adapter for impl's TestBadAdapters: its first line is not JSON.
echo $$ >>"$PIDFILE"
echo "starting adapter v1.2 ..."
read -r line
