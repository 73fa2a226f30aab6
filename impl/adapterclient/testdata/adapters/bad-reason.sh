#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it fails an acquire with a reason not in the list.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo '{"type":"hello","protocol":2,"name":"bad","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
read -r line
echo '{"type":"fail","in_reply_to":2,"reason":"gone"}'
read -r line
