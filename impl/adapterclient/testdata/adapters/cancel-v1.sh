#!/bin/sh
# An adapter for impl/adapterclient's TestCancel: protocol 1, no cancel. It answers its
# acquire (id 2) only after 300 ms: lockbench has given up by then and
# ignores the late reply.
echo $$ >>"${PIDFILE:-/dev/null}"
echo '{"type":"hello","protocol":1,"name":"slow","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
read -r line
sleep 0.3
echo '{"type":"fail","in_reply_to":2}'
while read -r line; do :; done
