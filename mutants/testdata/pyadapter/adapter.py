#!/usr/bin/env python3
# lockbench-mutant in Python: the mutation zoo's locks (mutants/mutants.go, docs/mutants.md) whose bugs
# need a program that reads its clocks through libc, as Python, the JVM or C do and a Go program never
# does: client-clock-step steps such a program's wall clock (an LD_PRELOAD clock offset). Protocol 2
# (docs/protocol.md), one logical client per process, redis-py (Debian's python3-redis).
#   python3 adapter.py --lock local-validity --bug none                 # the correct lock
#   python3 adapter.py --lock local-validity --bug validity-wall-clock  # its mutant
# As in the Go adapter (../adapter), each bug is one block marked MUTANT, its name and a colon, beside the code it
# replaces; the hello declares the correct lock's claims and policy, whatever the bug.
import json, os, sys, time
try:
    import redis
except ImportError:  # a python3 without redis-py first on PATH: use Debian's python3-redis
    if sys.executable != "/usr/bin/python3" and os.access("/usr/bin/python3", os.X_OK):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

LOCKS = {"local-validity": "token-lua whose validity the lock keeps itself: the acquire's deadline is TTL - drift "
         "(TTL*0.01 + 2 ms) from the call's start on a monotonic clock, and check answers from it without a round "
         "trip (policy: ask the lock before each write)"}
BUGS = {"local-validity": {"validity-wall-clock": "the acquire's elapsed time and the deadline check answers from are "
        "counted on the wall clock (time.time()): a clock stepped back keeps the lease valid that much longer"}}

def flag(name):
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else ""

lock, bug = flag("--lock"), flag("--bug")
if lock not in LOCKS or (bug != "none" and bug not in BUGS[lock]):
    print("lockbench-mutant.py: give --lock LOCK and --bug BUG (none: the correct lock); locks and bugs: %s"
          % {k: ["none", *BUGS[k]] for k in LOCKS}, file=sys.stderr)
    sys.exit(2)

clock = time.monotonic
if bug == "validity-wall-clock":
    # MUTANT validity-wall-clock: the lease's time is counted on the wall clock, which can step.
    clock = time.time

RELEASE = "local v = redis.call('GET', KEYS[1]) if v == ARGV[1] then return redis.call('DEL', KEYS[1]) " \
          "elseif v then return -1 else return 0 end"  # 1: released, 0: the key is gone, -1: another's

def send(**m):
    print(json.dumps(m), flush=True)

summary = LOCKS[lock] if bug == "none" else "MUTANT %s: %s; the lock it breaks: %s" % (bug, BUGS[lock][bug], LOCKS[lock])
send(type="hello", protocol=2, name="mutant-" + lock, version="bug " + bug, nodes=1, check=True,
     summary=summary, source="lockbench's mutation zoo (mutants/, docs/mutants.md)",
     claims={"atomic_acquire": True, "token_release": True, "renewal": False, "reentrant": False,
             "quorum": False, "fencing": False, "validity": True},
     policy={"check_validity": False, "honour_lost": False, "ask_lock": True})

def security():  # AUTH and TLS from lockbench's environment (docs/protocol.md)
    e, kw = os.environ, {}
    if e.get("LOCKBENCH_REDIS_USERNAME"): kw["username"] = e["LOCKBENCH_REDIS_USERNAME"]
    if e.get("LOCKBENCH_REDIS_PASSWORD"): kw["password"] = e["LOCKBENCH_REDIS_PASSWORD"]
    if e.get("LOCKBENCH_TLS"):
        kw.update(ssl=True, ssl_ca_certs=e.get("LOCKBENCH_TLS_CA"), ssl_certfile=e.get("LOCKBENCH_TLS_CERT"),
                  ssl_keyfile=e.get("LOCKBENCH_TLS_KEY"), ssl_check_hostname=False)
    return kw

c = {"leases": {}}  # token -> deadline on clock()

def release(key, token):  # compare-and-delete: ok, or fail with why
    r = c["release"](keys=[key], args=[token])
    c["leases"].pop(token, None)
    if r == 1: return {}
    return {"type": "fail", "reason": "taken" if r == -1 else "expired"}

def serve(m):
    reply = {"type": "ok"}
    try:
        if "redis" not in c:  # redis-py sets timeouts per client; lockbench's calls share one deadline
            t = max(m.get("deadline_ms", 0), 1) / 1000
            c["redis"] = redis.Redis(c["host"], c["port"], socket_timeout=t, socket_connect_timeout=t, **security())
            c["release"] = c["redis"].register_script(RELEASE)
        if m["type"] == "acquire":
            start, token, ttl = clock(), os.urandom(16).hex(), c["ttl"]
            reply["token"] = token
            if not c["redis"].set(m["key"], token, nx=True, px=int(ttl * 1000)):
                return {"type": "fail", "reason": "taken", "token": token}
            deadline = start + ttl - (ttl * 0.01 + 0.002)  # counted from the call's start: the key was set after it
            left = deadline - clock()
            if left <= 0:  # the call took the whole lease: give the key back (whoever holds it, not us)
                release(m["key"], token)
                return {"type": "fail", "reason": "expired", "token": token, "error": "the call left no validity"}
            c["leases"][token] = deadline
            reply["validity_ms"] = left * 1000
        elif m["type"] == "release":
            reply.update(release(m["key"], m["token"]))
        elif m["type"] == "check":
            left = c["leases"][m["token"]] - clock() if m["token"] in c["leases"] else 0
            reply["valid"] = left > 0
            if left > 0: reply["validity_ms"] = left * 1000
        elif m["type"] != "ping":
            reply = {"type": "fail", "error": "not supported: " + m["type"]}
    except redis.exceptions.RedisError as e:  # a timeout, a lost connection: the outcome is unknown
        reply = {"type": "unknown", "error": repr(e), "reason": "unavailable", **({"token": reply["token"]} if "token" in reply else {})}
    return reply

for line in sys.stdin:
    if not line.strip(): continue
    m = json.loads(line)
    if m["type"] == "init":
        host, port = m["endpoints"][0].rsplit(":", 1)
        c.update(host=host, port=int(port), ttl=m["ttl_ms"] / 1000)
        send(type="init_ok", in_reply_to=m["id"])
    else:
        send(**serve(m), in_reply_to=m["id"])
