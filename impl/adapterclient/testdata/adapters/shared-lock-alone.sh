#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it declares a shared lock without threads.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo '{"type":"hello","protocol":2,"name":"bad","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1,"shared_lock":true}'
read -r line
