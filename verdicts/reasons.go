package verdicts

// Reasons that several strategies' rows share, grouped by the scenarios
// they explain.

// Node restarts and pauses (node-restart, node-restart-delayed,
// node-restart-aof, node-pause).
//
// A restart without persistence loses every key of the node while their
// owners still hold valid leases; a single-node lock has nothing else to
// stand on, and Redlock loses the vote of the restarted node, which breaks a
// bare quorum (redis.io distlock, "Performance, crash recovery and fsync";
// Kleppmann 2016). The two fixes the distlock page gives, a restart delayed
// past the TTL and AOF with fsync always, must hold. A pause keeps the keys
// but lets their TTLs run out in wall time, and commands sent meanwhile run
// after SIGCONT: a late unchecked DEL then frees the next owner's lock.
const (
	lostOnRestart    = "the restart without persistence drops the lock while its holder is within its lease, and another client is granted it (redis.io distlock on crash recovery)"
	delayedRestart   = "the node stays down past the TTL, so the held lock would have expired before the node can grant it again (redis.io distlock: delayed restarts)"
	aofReloads       = "AOF with appendfsync always logs the grant before replying; the restarted node reloads the key with its absolute expiry and refuses others"
	pausedNode       = "SIGSTOP keeps the key while its TTL runs out in wall time; nothing is granted until SIGCONT, and then only after the holder's lease has ended"
	lateUncheckedDel = "the holder's DEL, sent during the pause, runs after SIGCONT behind the first queued SET NX and deletes that new owner's lock; the old holder, acquiring again at once, is granted it too: the unchecked release of the seeds' simple locks"
	onePausedOfFive  = "one of five nodes paused: the other four still form a quorum, so grants go on; the paused node's queued commands leave at most stray keys that cannot make a second quorum"
)

// Failovers (failover-lost-write, sentinel-failover).
//
// Both scenarios lose a fresh lock on purpose: Redis replication is
// asynchronous, so a primary acknowledges a grant before its replica has
// it, and a replica promoted after the primary died never saw it (redis.io
// replication docs: asynchronous by default, and writes acknowledged to
// the client can be lost at a failover, with WAIT too; redis.io distlock:
// "a race condition with this model"; Kleppmann 2016). The
// client the fault strikes stays inside its lease until the next holder has
// read the protected resource, and the next holder's write waits for the
// struck client's read (the failover-lost-write scenario), so the loss becomes two
// holders and a lost update in every run. Quorum locks keep each node on
// its own: one node of five failing over costs a holder that keeps a
// majority one vote.
const (
	lostAtFailover             = "replication is asynchronous: the promoted replica never saw the grant (the scenario cuts the replication link first, so the loss is forced, not waited for), so a second client is granted the key inside the first one's lease and both write (redis.io replication docs: replication is asynchronous, so a failover can lose writes the primary acknowledged, even with WAIT; redis.io distlock's failover race, Kleppmann 2016: the possibility; the cut makes it certain)"
	lostAtSentinelFailover     = "Sentinel promotes a replica that never saw the fresh grant (asynchronous replication; the scenario cuts the replication link first, so the loss is forced): once clients follow, a second client is granted the key inside the first one's lease (TTL at least 4 s) and both write (redis.io replication docs: a failover can lose acknowledged writes; redis.io distlock, Kleppmann 2016)"
	quorumKeepsFailedOverGrant = "n1 of five fails over and loses the grant; the scenario strikes only a holder on at least 4 nodes, which keeps a majority, so no other client reaches a quorum: it covers a failover outside a bare quorum (a bare quorum is failover-bare-quorum's case; measured: redlock held in 10 of 10 seeds at 16 clients)"
	bareQuorumFailover         = "A holds exactly n1-n3 (split votes under contention often leave a bare quorum); n1 fails over to a replica that never saw the grant, so A keeps 2 of 5 and B takes n1, n4 and n5 well inside A's validity: two quorums, and A's validity check passes (Kleppmann 2016: a lost key breaks a bare quorum, as node-restart shows; measured at 16 clients, seeds 1-10: every landed strike broke, redlock in 5, redsync in 3, the other seeds inconclusive)"
)

// token-lua on a Redis Cluster (token-lua-cluster) under the cluster
// scenarios.
const (
	lostAtClusterFailover = "replication is asynchronous on a Redis Cluster too: the scenario holds the key's replica back (CLIENT PAUSE), so the fresh grant is on the primary only; the primary is SIGKILLed, the replica drops the stream it buffered when its link breaks, and the cluster's own election (cluster-node-timeout 500 ms; 1.5-2.5 s after the kill) makes it the slot's primary without the key: a second client is granted the key inside the first one's lease (TTL at least 5 s) and both write (redis.io cluster specification: Redis Cluster is not strongly consistent, a failover can lose acknowledged writes; measured 2026-12-06 on a busy 2-core machine, lockbench run --strategy token-lua-cluster --scenario cluster-failover, seeds 1-20: exclusion broke in 16, the other 4 inconclusive: no second client was granted the key before the holder's cap, the fault missed; again at commit 440c469, load 4-5: exclusion and the resource broke in 20 of 20)"
	slotMoveKeepsLock     = "MIGRATE moves the key with its value and remaining TTL (redis.io MIGRATE: DUMP/RESTORE with the TTL), and the slot changes owner atomically per node by CLUSTER SETSLOT NODE: the key is on the new primary with the holder's token (the window's note reads it there), the other clients' SET NX meet it after following MOVED or ASK and are refused, and the holder's release finds it (measured 2026-12-06, seeds 1-20: held in 20, the moved key keeping its TTL)"
)

// A lock that waits for a replica on a Redis Cluster
// (token-lua-wait-cluster) under cluster-failover.
const (
	waitClusterHeldBack = "while the key's replica is held back (CLIENT PAUSE ALL, TTL/2) it acknowledges nothing, so every acquire is refused: the one whose SET took waits out WAIT's timeout, deletes its key again and says unavailable, the others meeting that key meanwhile are refused as taken; the hold, a fault window of its own, must grant nothing: availability drops, safety does not, where token-lua-cluster's grant made in the hold is lost at the election"
	waitClusterKeeps    = "the grant struck is the key's first after the hold, one the replica acknowledged: the primary is SIGKILLed and the cluster elects that replica (1.5-2.5 s), which has the holder's key (the window's note reads it there), so the other clients are refused until the holder releases (redis.io WAIT: a write a replica acknowledged survives the promotion of that replica)"
	waitClusterOrphan   = "but the elected primary has no replica of its own (the killed primary stays down, and replica migration needs a primary with a spare replica: 3+3 has none), so WAIT 1 is never satisfied again and every later acquire of the slot's keys is refused until a replica joins: liveness breaks (the probe cannot acquire the key after the run), the price of waiting for a replica that is not there; for the same reason exclusion would hold there even had the key been lost, so the evidence that the acknowledged grant survived is the note's read on the elected replica"
	waitClusterMeasured = "measured 2026-12-06, process backend, load 4-5, lockbench run --strategy token-lua-wait-cluster --scenario cluster-failover --seed 1..5 (TTL 5 s, 16 s runs): the strike came in 5 of 5, elections took 1.24-2.02 s, the elected replica held the struck client's key in 5 of 5, no grant in either window (67-78 acquires refused in the hold, 37-55 in the failover), exclusion and the resource held in 5 of 5 over 26-28 grants, liveness broke in 5 of 5"
)

// A lock that waits for a replica (token-lua-wait: WAIT 1 after its SET
// and after its release, on a primary with replicas) under the failover
// scenarios. The redis.io WAIT page says what it buys and what not: a
// write a replica acknowledged survives a failover that promotes that
// replica (Sentinel and Redis Cluster try to promote the best one), but
// WAIT does not make Redis strongly consistent, and an acknowledged
// write can still be lost. Each reason below was seen in runs (see
// docs/verdicts.md for the counts).
const (
	waitHeldBack = "while the replication link is cut no replica acknowledges, so every acquire is refused: the one whose SET took waits out WAIT's timeout, deletes its key again and says unavailable, and the others, meeting that key meanwhile, are refused as taken; the hold, the first fault window, must grant nothing (measured: none in 6 of 6 runs): availability drops, safety does not"
	waitKeeps    = "once the link heals, the grant struck is one the replica acknowledged, and that replica is promoted: the key is still the holder's on the new primary (the window's note reads it there), the killed primary rejoins as its replica, and the other clients' acquires are refused as taken until the holder releases: the lock survives the failover that token-lua's grant, made during the cut, does not (redis.io WAIT: a write a replica acknowledged survives the promotion of that replica)"
	waitOther    = "WAIT 1 was satisfied by n2 while replication to n3 was cut; n3, the replica that never saw the grant, is promoted and n2 re-pointed at it (a full resync drops the grant n2 acknowledged): another client is granted the key, n2 acknowledging, inside the holder's lease and both write. WAIT narrows the failover window only as far as the replica promoted is one that acknowledged (redis.io WAIT: an acknowledged write can still be lost; Sentinel prefers the replica with the largest offset, but replica-priority, an operator or a second fault can pick another)"
)

// Clock jumps and the random mix on quorum locks (clock-jump, random).
//
// Measured: with 8 contending clients, split votes often leave a holder
// with exactly three of five nodes; seed 3 of clock-jump shows a holder on
// n2,n3,n4, n4 jumping and another client locking it.
const (
	bareQuorumJump = "safe while the holder has four or five nodes; when contention left it a bare quorum of three and the jumped node is one of them, another client locks that node plus the two free ones (Kleppmann 2016; measured: violated in 4 of 10 seeds, redsync 3 of 10)"
	bareQuorumMix  = "one node or one client at a time is faulty, but a clock jump or an empty restart on a node of a bare quorum of three (left by split votes) lets a second client in (Kleppmann 2016), and the mix's key loss deletes the key on every node while the holder's validity still runs"
)
