#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it ignores SIGTERM and the end of its stdin.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
trap '' TERM
echo '{"type":"hello","protocol":1,"name":"bad","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
read -r line
echo '{"type":"fail","in_reply_to":2}'
while :; do sleep 1; done
