#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it claims a quorum on one node.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo '{"type":"hello","protocol":1,"name":"bad","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":true,"fencing":false,"validity":false},"nodes":1}'
read -r line
