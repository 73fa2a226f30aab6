#!/usr/bin/env python3
# lockbench adapter (docs/protocol.md, protocol 2) for redis-py's Lock, used as its documentation
# shows: non-blocking acquire, release; --renew: extend whenever lockbench asks (every TTL/3);
# --check: lockbench asks Lock.owned() before each write; --threads N: N logical clients per
# process, a thread each; --shared-lock: they share one Lock object per key (thread_local=False).
import json, os, queue, sys, threading, uuid
try:
    import redis
except ImportError:  # a python3 without redis-py first on PATH: use Debian's python3-redis
    if sys.executable != "/usr/bin/python3" and os.access("/usr/bin/python3", os.X_OK):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

args = sys.argv[1:]
renew, check, shared = "--renew" in args, "--check" in args, "--shared-lock" in args
threads = int(args[args.index("--threads") + 1]) if "--threads" in args else 1
out = threading.Lock()
def send(**m):
    with out: print(json.dumps(m), flush=True)

hello = dict(type="hello", protocol=2, name="redis-py", version=redis.__version__, nodes=1, extend=renew, check=check,
     summary="redis-py Lock: SET k token NX PX ttl; release (and extend) by Lua with a token check",
     source="redis-py redis.lock.Lock", claims={"atomic_acquire": True, "token_release": True,
     "renewal": renew, "reentrant": False, "quorum": False, "fencing": False, "validity": False})
send(**hello, **({"threads": threads, "shared_lock": shared} if threads > 1 else {}))
clients, shared_locks = {}, {}

def security():  # AUTH and TLS from lockbench's environment (docs/protocol.md)
    e, kw = os.environ, {}
    if e.get("LOCKBENCH_REDIS_USERNAME"): kw["username"] = e["LOCKBENCH_REDIS_USERNAME"]
    if e.get("LOCKBENCH_REDIS_PASSWORD"): kw["password"] = e["LOCKBENCH_REDIS_PASSWORD"]
    if e.get("LOCKBENCH_TLS"):
        kw.update(ssl=True, ssl_ca_certs=e.get("LOCKBENCH_TLS_CA"), ssl_certfile=e.get("LOCKBENCH_TLS_CERT"),
                  ssl_keyfile=e.get("LOCKBENCH_TLS_KEY"), ssl_check_hostname=False)
    return kw

def whose(c, key):  # why a release or extend found the lock not ours: the key is gone, or another's
    try: return "taken" if c["redis"].exists(key) else "expired"
    except redis.exceptions.RedisError: return "unknown"

def serve(c, m):  # one request of logical client c
    reply = {"type": "ok", "in_reply_to": m["id"]}
    try:
        if "redis" not in c:  # redis-py sets timeouts per client; lockbench's calls share one deadline
            t = max(m.get("deadline_ms", 0), 1) / 1000  # (omitted when 0)
            c["redis"] = redis.Redis(c["host"], c["port"], socket_timeout=t, socket_connect_timeout=t, **security())
        if m["type"] == "acquire":
            lock = c["redis"].lock(m["key"], timeout=c["ttl"], thread_local=not shared)
            lock = shared_locks.setdefault(m["key"], lock) if shared else lock
            reply["token"] = uuid.uuid1().hex  # given to redis-py, so a failed acquire can say it
            if lock.acquire(blocking=False, token=reply["token"]):
                c["locks"][reply["token"]] = lock
            else:
                reply.update(type="fail", reason="taken")
        elif m["type"] == "release":
            c["locks"].pop(m["token"]).release()
        elif m["type"] == "extend":
            c["locks"][m["token"]].extend(c["ttl"], replace_ttl=True)
        elif m["type"] == "check":
            reply["valid"] = m["token"] in c["locks"] and c["locks"][m["token"]].owned()
        elif m["type"] != "ping":
            reply.update(type="fail", error="not supported: " + m["type"])
    except redis.exceptions.LockNotOwnedError as e:  # not ours any more: a definite no; whose is it?
        reply.update(type="fail", error=repr(e), reason=whose(c, m["key"]))
    except redis.exceptions.LockError as e:  # e.g. a release by a Lock object that holds no token
        reply.update(type="fail", error=repr(e), reason="unknown")
    except redis.exceptions.RedisError as e:  # a timeout, a lost connection: the outcome is unknown
        reply.update(type="unknown", error=repr(e), reason="unavailable")
    send(**reply)

for line in sys.stdin:  # init in turn; each logical client's requests in order on its own thread
    m = json.loads(line)
    if m["type"] == "init":
        host, port = m["endpoints"][0].rsplit(":", 1)
        c = clients[m["owner"]] = {"host": host, "port": int(port), "ttl": m["ttl_ms"] / 1000, "locks": {}, "q": queue.Queue()}
        threading.Thread(target=lambda c: [serve(c, r) for r in iter(c["q"].get, None)], args=(c,), daemon=True).start()
        send(type="init_ok", in_reply_to=m["id"])
    else:
        clients[m.get("client") or next(iter(clients))]["q"].put(m)
