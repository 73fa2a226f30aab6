#!/bin/sh
# A good protocol-1 adapter for impl/adapterclient's TestProtocol1: it grants and
# releases, and exits with status 3 if lockbench sends it a field of
# protocol 2 (a request naming its client) or a message type it does not know.
echo $$ >>"${PIDFILE:-/dev/null}"
echo '{"type":"hello","protocol":1,"name":"v1","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1}'
n=0
while read -r line; do
  case "$line" in *'"client"'*|*'"type":"check"'*|*'"type":"cancel"'*) echo "protocol 2 sent to a protocol-1 adapter: $line" >&2; exit 3 ;; esac
  n=$((n+1))
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  case "$line" in
    *'"type":"init"'*) echo "{\"type\":\"init_ok\",\"in_reply_to\":$id}" ;;
    *'"type":"acquire"'*) echo "{\"type\":\"ok\",\"in_reply_to\":$id,\"token\":\"t$n\",\"reason\":\"ignored in v1\"}" ;;
    *) echo "{\"type\":\"ok\",\"in_reply_to\":$id}" ;;
  esac
done
