#!/bin/sh
# An adapter for impl/adapterclient's TestCrashAtPoint: it declares the crash point
# "after-set" and stops there in every acquire; on lockbench's crash it
# exits at once, on continue it grants. A child (sleep) it leaves behind
# must die with it.
echo $$ >>"${PIDFILE:-/dev/null}" # the test checks that no process is left
sleep 60 &
echo $! >>"${PIDFILE:-/dev/null}"
echo '{"type":"hello","protocol":1,"name":"crashy","version":"0","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1,"crash_points":["after-set"]}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
while read -r line; do
	id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
	echo "{\"type\":\"point\",\"in_reply_to\":$id,\"point\":\"after-set\"}"
	read -r answer
	case "$answer" in
	*'"crash"'*) [ -n "$IGNORE_CRASH" ] || exit 1 ;;
	esac
	echo "{\"type\":\"ok\",\"in_reply_to\":$id,\"token\":\"t$id\"}"
done
