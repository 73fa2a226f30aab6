package bench

// networkVerdicts covers the partitions, latency and clock jumps (proxies
// and the clock shim), and the random mix scenarios: scenario → strategy →
// expectation.
func networkVerdicts() map[string]map[string]Expectation {
	slow := func(reason string) Expectation {
		e := safe(reason)
		e.DuringFaults = "grants"
		return e
	}
	mixed := func(reason string) Expectation {
		return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, Reason: reason}
	}
	// Measured: with 8 contending clients, split votes often leave a
	// holder with exactly three of five nodes; seed 3 of clock-jump shows
	// a holder on n2,n3,n4, n4 jumping and another client locking it.
	quorumJump := Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold,
		Reason: "safe while the holder has four or five nodes; when contention left it a bare quorum of three and the jumped node is one of them, another client locks that node plus the two free ones (Kleppmann 2016; measured: violated in 4 of 10 seeds, redsync 3 of 10)"}
	quorumMix := "one node or one client at a time is faulty, but a clock jump or an empty restart on a node of a bare quorum of three (left by split votes) lets a second client in (Kleppmann 2016)"
	return map[string]map[string]Expectation{
		"partition-holder": {
			"naive":     broken("cut off from Redis past the TTL, the holder still believes it holds: the key expires, another owner enters, the cut-off one writes on reconnect"),
			"set-nx-px": broken("cut off from Redis past the TTL, the holder still believes it holds: the key expires, another owner enters, the cut-off one writes on reconnect"),
			"token-lua": broken("cut off from Redis past the TTL, the holder still believes it holds: the key expires, another owner enters, the cut-off one writes on reconnect"),
			"watchdog":  safe("renewals fail while cut off; Lost fires once TTL has passed since the last renewal, and the holder honours it before writing (Redisson's watchdog)"),
			"reentrant": broken("no renewal, no check: the hash key expires while the holder is cut off, another owner enters, the cut-off one writes on reconnect"),
			"redlock":   safe("the holder's validity deadline passes while it is cut off, and its check before writing drops the stale write (redis.io distlock)"),
			"fenced":    fencedOnly("exclusion breaks when the key expires behind the cut-off holder, but the resource is reachable and rejects its older fencing token (Kleppmann 2016)"),
			"redsync":   safe("the holder's validity (mutex.Until) passes while it is cut off, and its check before writing drops the stale write"),
			"redislock": safe("refreshes fail while cut off; Lost fires once TTL has passed since the last refresh, and the holder honours it before writing (as watchdog); with --redislock-refresh off it breaks as token-lua"),

			"redsync-single": safe("the holder's validity (mutex.Until) passes while it is cut off, and its check before writing drops the stale write"),
		},
		"latency": {
			"naive":     slow("every client sees the same +100 ms round trip to the one node, so grants stay ordered: a late reply (+50 ms) shortens the lease to TTL−50 ms, still far longer than a 12.5 ms critical section"),
			"set-nx-px": slow("every client sees the same delay: the DEL reaches the node 112 ms after the SET, while the owner's own key (TTL 250 ms) is still there"),
			"token-lua": slow("every client sees the same delay: a reply 50 ms late shortens the lease to TTL−50 ms, far longer than a hold; an overlap would need one client's reply TTL−CS later than another's"),
			"watchdog":  slow("every client sees the same delay and holds end long before the TTL; renewals time out (round trip > TTL/3) but Lost only fires after the TTL, past the hold"),
			"reentrant": safe("every nested acquire and release reaches the node 100 ms after the previous one and renews the hash's TTL (250 ms): counts and exclusion stay intact; a hold of depth 3 takes six round trips (600 ms), so the window may see no new grant"),
			"redlock":   slow("the slow node times out (per-node timeout TTL/10 = 25 ms < 100 ms) and never counts; the other four keep granting with a quorum of three (redis.io distlock)"),
			"fenced":    slow("every client sees the same delay: grants stay ordered and fencing tokens increase; slower, not unsafe"),
			"redsync":   slow("the slow node times out (redsync's 0.05·TTL call timeout) and never counts; the other four keep granting with a quorum of three"),
			"redislock": slow("every client sees the same delay and holds end long before the TTL; refreshes time out (round trip > TTL/3) but Lost only fires after the TTL, past the hold (as watchdog)"),

			"redsync-single": {Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: "no-grants",
				Reason: "redsync's call timeout (0.05×TTL = 12.5 ms) is below the 100 ms round trip, so every acquire during the window times out (info): safe but unavailable, unlike token-lua"},
		},
		"clock-jump": {
			"naive":     broken("the server's clock jumps past the TTL: the key expires at once (Redis expires by the wall clock), another owner enters while the holder still works"),
			"set-nx-px": broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder still works"),
			"token-lua": broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder, within its lease, still works (Kleppmann 2016)"),
			"watchdog":  {Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, Reason: "the jump expires the key at once; Lost fires only at the next renewal (every TTL/3), so the holder writes unless a renewal fell between the jump and its write (measured: violated in 10 of 10 seeds of three jumps, not certain per jump)"},
			"reentrant": broken("the server's clock jumps past the TTL: the hash key expires at once, another owner enters while the holder still works"),
			"redlock":   quorumJump,
			"fenced":    fencedOnly("the jump expires the key and another owner enters (exclusion breaks), but the resource rejects the holder's older fencing token"),
			"redsync":   quorumJump,
			"redislock": {Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, Reason: "the jump expires the key at once; Lost fires only at the next refresh (every TTL/3), so the holder writes unless a refresh fell between the jump and its write (as watchdog)"},

			"redsync-single": broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder, within mutex.Until (the client's clock did not jump), still works (Kleppmann 2016)"),
		},
		"redlock-clock-jump": {
			"redlock": broken("A holds a bare quorum n1-n3; n3's clock jumps past the TTL and drops A's key; B (cut off from n1-n2) locks n3-n5 while A, within its validity, still writes (Kleppmann 2016)"),
			"redsync": broken("A holds a bare quorum n1-n3; n3's clock jumps past the TTL and drops A's key; B locks n3-n5 while A, within mutex.Until, still writes (Kleppmann 2016)"),
		},
		"random": {
			"naive":     {Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Reason: "a clock jump during a critical section lets another owner in; a cut or pause between SETNX and EXPIRE can leave a key without TTL: seed-dependent"},
			"set-nx-px": mixed("a clock jump during a critical section expires the key and lets another owner in, and the holder's DEL then frees the newcomer's lock: seed-dependent"),
			"token-lua": mixed("a clock jump during a critical section expires the key and lets another owner in; pauses, cuts and latency alone cannot (holds are far shorter than the TTL): seed-dependent"),
			"watchdog":  mixed("a clock jump between two renewals expires the key before Lost can fire: seed-dependent"),
			"reentrant": mixed("a clock jump expires the hash mid-hold; a pause, jump or restart between nested acquires re-creates the hash at count 1 (reentrancy check): seed-dependent"),
			"redlock":   mixed(quorumMix),
			"fenced":    {Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, Fencing: AtRisk, Reason: "a clock jump lets two owners overlap; fencing on writes only still loses an update when the older holder writes first, and a restart (no persistence) resets the fencing counter"},
			"redsync":   mixed(quorumMix),
			"redislock": mixed("a clock jump between two refreshes expires the key before Lost can fire: seed-dependent"),

			"redsync-single": mixed("a clock jump during a critical section expires the key and lets another owner in while mutex.Until still runs: seed-dependent"),
		},
	}
}

// networkNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
func networkNamed() []string {
	return []string{"token-lua/clock-jump", "redlock/redlock-clock-jump", "fenced/partition-holder"}
}
