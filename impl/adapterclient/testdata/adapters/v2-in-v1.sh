#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it declares check, of protocol 2, in a protocol-1 hello.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
echo '{"type":"hello","protocol":1,"name":"bad","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1,"check":true}'
read -r line
