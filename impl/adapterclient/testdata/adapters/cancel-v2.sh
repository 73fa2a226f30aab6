#!/bin/sh
# An adapter for impl/adapterclient's TestCancel: it serves cancel (protocol 2). It does
# not answer its acquire (id 2) until lockbench cancels it (id 3), then
# answers it unknown, reason cancelled, and the cancel ok.
echo $$ >>"${PIDFILE:-/dev/null}"
echo '{"type":"hello","protocol":2,"name":"cancel","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1,"cancel":true}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
read -r line
read -r line
case "$line" in *'"type":"cancel"'*'"request":2'*) ;; *) echo "want a cancel of request 2, got $line" >&2; exit 3 ;; esac
echo '{"type":"unknown","in_reply_to":2,"reason":"cancelled","error":"abandoned"}'
echo '{"type":"ok","in_reply_to":3}'
while read -r line; do :; done
