#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it exits in the middle of acquire.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo '{"type":"hello","protocol":1,"name":"bad","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
read -r line
echo 'panic: dial tcp: connection refused' >&2
exit 3
