package verdicts

// Cancel (an acquire cancelled in flight).
//
// The lock's nodes are stopped, the acquire's command queues in them, the
// call is cancelled and the nodes resume, so the command still runs. A
// correct lock either finishes the call (its real outcome) or abandons
// it and deletes what its command set, or reports the outcome unknown;
// one that answers "not acquired" and leaves its key is caught by the
// orphan check. go-redis, under every built-in Redis strategy, does not
// abandon a command it has written when the call's context is
// cancelled: it waits for the reply. It does refuse to send another
// command on a cancelled context (its pool wait), which is where the
// built-in strategies differ.
const (
	cancelIgnored = "go-redis does not abandon a written command when the call's context is cancelled: the acquire's one command, queued in the stopped node, runs after the resume and the call returns its real outcome (measured: granted), so nothing is left behind"
	cancelNoTTL   = "SETNX, queued in the stopped node, runs after the resume (go-redis waits for its reply), but the cancelled context stops PEXPIRE from being sent (go-redis's pool refuses a cancelled context): the call reports the outcome unknown and the key has no TTL, a deadlock (as crash-between and lost-reply, without a crash or a lost reply)"
	cancelQuorum  = "the stopped nodes outlast the per-node timeout (TTL/10), so the vote fails whatever the cancel (go-redis waits for each written SET); the unlock then sent to every node deletes the SETs once they ran, but reaches a node on another connection and may run before that node's queued SET: an orphan of a failed acquire on that node (measured: on one node of five in 1 of 4 strikes, seed 1), excused by the orphan check on a minority, a violation on a majority"
	cancelRedsync = "redsync's call timeout (0.05×TTL) runs out while the nodes are stopped, so the acquire fails on its own timeout whatever the cancel; its failed-lock cleanup releases on a cancelled context, which go-redis refuses to send, or races the SET queued in the node on another connection: a key left by a failed acquire is possible (measured at TTL 100 ms: the SET had not even gone out when the call gave up)"
)

// renewalCutLost is the renewal-cut row of the Redis locks that renew and
// honour Lost: the holder's links are cut right after a renewal for
// 1.2×TTL, past the TTL that renewal set.
const renewalCutLost = "the renewals during the cut fail (connections refused) and Lost fires at the lease's deadline, a TTL after the last successful renewal was sent (a timer, not the next renewal tick, which comes up to TTL/3 later: with the tick, 2 of 20 watchdog seeds at TTL 100 ms on a busy machine wrote after the heal and before that tick, over the next owner), so the holder, kept in its critical section until another client was granted the key, stops before its write"
