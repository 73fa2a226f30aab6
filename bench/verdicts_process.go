package bench

// processVerdicts covers the node kills, restarts and pauses, Redlock
// minority and majority down scenarios: scenario → strategy → expectation.
//
// A restart without persistence loses every key of the node while their
// owners still hold valid leases; a single-node lock has nothing else to
// stand on, and Redlock loses the vote of the restarted node, which breaks a
// bare quorum (redis.io distlock, "Performance, crash recovery and fsync";
// Kleppmann 2016). The two fixes the distlock page gives, a restart delayed
// past the TTL and AOF with fsync always, must hold. A pause keeps the keys
// but lets their TTLs run out in wall time, and commands sent meanwhile run
// after SIGCONT: a late unchecked DEL then frees the next owner's lock.
func processVerdicts() map[string]map[string]Expectation {
	lost := "the restart without persistence drops the lock while its holder is within its lease, and another client is granted it (redis.io distlock on crash recovery)"
	delayed := "the node stays down past the TTL, so the held lock would have expired before the node can grant it again (redis.io distlock: delayed restarts)"
	aof := "AOF with appendfsync always logs the grant before replying; the restarted node reloads the key with its absolute expiry and refuses others"
	paused := "SIGSTOP keeps the key while its TTL runs out in wall time; nothing is granted until SIGCONT, and then only after the holder's lease has ended"
	lateDel := "the holder's DEL, sent during the pause, runs after SIGCONT behind the first queued SET NX and deletes that new owner's lock; the old holder, acquiring again at once, is granted it too: the unchecked release of the seeds' simple locks"
	one := "one of five nodes paused: the other four still form a quorum, so grants go on; the paused node's queued commands leave at most stray keys that cannot make a second quorum"
	return map[string]map[string]Expectation{
		"node-restart": {
			"naive":     {Exclusion: Break, Resource: Break, Liveness: Hold, Reason: lost + "; both read before either writes: a lost update"},
			"set-nx-px": {Exclusion: Break, Resource: Break, Liveness: Hold, Reason: lost + "; both read before either writes: a lost update"},
			"token-lua": {Exclusion: Break, Resource: Break, Liveness: Hold, Reason: lost + "; both read before either writes: a lost update"},
			"watchdog": {Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: lost + "; the next renewal finds the key gone and fires Lost, which stops the stale write only if it comes first (Redisson's watchdog cannot renew what the node forgot)"},
			"reentrant": {Exclusion: Break, Resource: Break, Liveness: Hold, Reason: lost + "; both read before either writes: a lost update"},
			"fenced": {Exclusion: Break, Resource: Hold, Liveness: Hold, Fencing: Break,
				Reason: "the restart loses the lock and the fencing counter with it: the next holder's token restarts at 1 (fencing tokens must come from durable storage, Kleppmann 2016), so the resource rejects its writes and stays safe"},
			"redislock": {Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold,
				Reason: lost + "; but a refresh (every TTL/3) that reaches the restarted node before the other client's grant finds the key gone and fires Lost, which ends the hold in time (measured, seeds 1-6 at 16 clients: exclusion broken in 5 of 10 runs, a lost update in 1; --redislock-refresh off breaks as token-lua)"},
			"redlock": {Exclusion: Break, Resource: Break, Liveness: Hold,
				Reason: "A holds the bare quorum n1-n3; n3 restarts empty and B, cut off from n1-n2, wins n3-n5 well inside A's validity, so A's validity check passes and both write (Kleppmann 2016; the distlock page's own restart example)"},
			"redsync": {Exclusion: Break, Resource: Break, Liveness: Hold,
				Reason: "A holds the bare quorum n1-n3; n3 restarts empty and B, cut off from n1-n2, wins n3-n5 well inside A's validity (mutex.Until), so both write (Kleppmann 2016)"},

			"redsync-single": {Exclusion: Break, Resource: Break, Liveness: Hold,
				Reason: lost + "; the holder's validity (mutex.Until) still runs, so its check passes and both write"},
		},
		"node-restart-delayed": {
			"naive":     safe(delayed),
			"set-nx-px": safe(delayed),
			"token-lua": safe(delayed),
			"watchdog":  safe(delayed),
			"reentrant": safe(delayed),
			"fenced": {Exclusion: Hold, Resource: Hold, Liveness: Hold, Fencing: Break,
				Reason: delayed + "; but the restart still loses the fencing counter, so tokens restart at 1 and the resource rejects the new holders' writes (safe, not live)"},
			"redislock": safe(delayed),
			"redlock":   safe("n3 stays down past the TTL, so A's keys have expired before B can win n3-n5 (redis.io distlock: delayed restarts)"),
			"redsync":   safe("n3 stays down past the TTL, so A's keys have expired before B can win n3-n5 (redis.io distlock: delayed restarts)"),

			"redsync-single": safe(delayed),
		},
		"node-restart-aof": {
			"naive":     safe(aof),
			"set-nx-px": safe(aof),
			"token-lua": safe(aof),
			"watchdog":  safe(aof),
			"reentrant": safe(aof),
			"fenced":    safe(aof + ", the fencing counter too"),
			"redislock": safe(aof),
			"redlock":   safe("n3 reloads A's key from its AOF (fsync always), so B, cut off from n1-n2, cannot win n3 (redis.io distlock: fsync=always)"),
			"redsync":   safe("n3 reloads A's key from its AOF (fsync always), so B, cut off from n1-n2, cannot win n3"),

			"redsync-single": safe(aof),
		},
		"node-pause": {
			"naive":     {Exclusion: Break, Resource: Break, Liveness: Hold, DuringFaults: "no-grants", Reason: lateDel},
			"set-nx-px": {Exclusion: Break, Resource: Break, Liveness: Hold, DuringFaults: "no-grants", Reason: lateDel},
			"token-lua": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants", Reason: paused + "; the holder's late release is token-checked"},
			"watchdog":  {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants", Reason: paused + "; renewals to the paused node time out, and Lost fires once the TTL has passed"},
			"reentrant": {Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, DuringFaults: "no-grants",
				Reason: "depends on nesting: with depth ≥ 2 (bench, matrix test) the holder's nested HINCRBY is queued in the paused node and returns after SIGCONT, past the TTL, and its critical section then overlaps the next owner (a Redis call inside the hold acts as a client pause); with depth 1 it holds as token-lua does"},
			"fenced":    {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants", Reason: paused + "; the fencing counter survives the pause"},
			"redislock": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants", Reason: paused + "; refreshes to the paused node time out, Lost fires once the TTL has passed, and the late release is token-checked"},
			"redlock":   {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "grants", Reason: one},
			"redsync":   safe(one + "; whether redsync keeps granting is reported, not gated: it needs the 4 live answers within its whole-call timeout (0.05×TTL, 2.5 ms at a 50 ms TTL), which CPU contention can starve (seen once in a full make test)"),

			"redsync-single": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants", Reason: paused + "; the late release is token-checked"},
		},
		"redlock-minority-down": {
			"redlock": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "grants",
				Reason: "2 of 5 nodes down: the 3 left are a quorum, so Redlock keeps granting and stays exclusive (redis.io distlock: available while a majority is up)"},
			"redsync": safe("2 of 5 nodes down: the 3 left are a quorum and redsync stays exclusive; whether it keeps granting is reported, not gated: it then needs all 3 answers within its whole-call timeout (0.05×TTL, 2.5 ms at a 50 ms TTL), which CPU contention can starve"),
		},
		"redlock-majority-down": {
			"redlock": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants",
				Reason: "3 of 5 nodes down: no quorum, so nothing is granted while they are down (unavailability, reported in the liveness figures, not a safety violation); healed, the probe acquires again"},
			"redsync": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants",
				Reason: "3 of 5 nodes down: no quorum, so nothing is granted while they are down (reported in the liveness figures); healed, the probe acquires again"},
		},
	}
}

// processNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
func processNamed() []string {
	return []string{
		"token-lua/node-restart",
		"redlock/node-restart",
		"redlock/node-restart-delayed",
		"redlock/node-restart-aof",
		"redlock/redlock-minority-down",
	}
}
