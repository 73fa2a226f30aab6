#!/usr/bin/env python3
# lockbench adapter (docs/protocol.md) for redis-py's Lock, used as its documentation shows:
# non-blocking acquire, release; with --renew, extend whenever lockbench asks (every TTL/3).
import json, os, sys
try:
    import redis
except ImportError:  # a python3 without redis-py first on PATH: use Debian's python3-redis
    if sys.executable != "/usr/bin/python3" and os.access("/usr/bin/python3", os.X_OK):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

renew = "--renew" in sys.argv[1:]
def send(**m): print(json.dumps(m), flush=True)

send(type="hello", protocol=1, name="redis-py", version=redis.__version__, nodes=1, extend=renew,
     summary="redis-py Lock: SET k token NX PX ttl; release (and extend) by Lua with a token check",
     source="redis-py redis.lock.Lock", claims={"atomic_acquire": True, "token_release": True,
     "renewal": renew, "reentrant": False, "quorum": False, "fencing": False, "validity": False})
client, locks = None, {}
for line in sys.stdin:
    m = json.loads(line)
    reply = {"type": "ok", "in_reply_to": m["id"]}
    try:
        if m["type"] == "init":
            host, port = m["endpoints"][0].rsplit(":", 1)
            ttl, reply["type"] = m["ttl_ms"] / 1000, "init_ok"
        elif m["type"] == "acquire":
            if client is None:  # redis-py sets timeouts per client; lockbench's calls share one deadline
                t = m["deadline_ms"] / 1000
                client = redis.Redis(host, int(port), socket_timeout=t, socket_connect_timeout=t)
            lock = client.lock(m["key"], timeout=ttl, blocking=False)
            if lock.acquire():
                reply["token"] = lock.local.token.decode()
                locks[reply["token"]] = lock
            else:
                reply["type"] = "fail"
        elif m["type"] == "release":
            locks.pop(m["token"]).release()
        elif m["type"] == "extend":
            locks[m["token"]].extend(ttl, replace_ttl=True)
        elif m["type"] != "ping":
            reply.update(type="fail", error="not supported: " + m["type"])
    except redis.exceptions.LockError as e:  # not ours (any more): a definite no
        reply.update(type="fail", error=repr(e))
    except redis.exceptions.RedisError as e:  # a timeout, a lost connection: the outcome is unknown
        reply.update(type="unknown", error=repr(e))
    send(**reply)
