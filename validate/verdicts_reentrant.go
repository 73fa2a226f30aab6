package validate

// reentrantVerdicts are the rows of reentrant, the Redisson-style hash lock
// (field = owner, HINCRBY, PEXPIRE): exclusive as token-lua is, with nesting
// counted, and with no renewal, so it breaks where token-lua does.
func reentrantVerdicts() map[string][]row {
	return map[string][]row{
		"reentrant": {
			{"baseline", safe("no fault: the hash lock grants one owner at a time, nesting counted")},
			{"long-cs", broken("no renewal: the hash key expires mid-CS and the next owner enters")},
			{"gc-pause", broken("a pause past the TTL: the hash key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; the hash key expires after the TTL")},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, DuringFaults: NotGranting,
				Reason: "depends on nesting: with depth ≥ 2 (bench, matrix test) the holder's nested HINCRBY is queued in the paused node and returns after SIGCONT, past the TTL, and its critical section then overlaps the next owner (a Redis call inside the hold acts as a client pause); with depth 1 it holds as token-lua does"}},
			{"failover-lost-write", broken("the hash lock's HINCRBY and PEXPIRE reached only the dead primary: " + lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("no renewal, no check: the hash key expires while the holder is cut off, another owner enters, the cut-off one writes on reconnect")},
			{"latency", safe("every nested acquire and release reaches the node 100 ms after the previous one and renews the hash's TTL (250 ms): counts and exclusion stay intact; a hold of depth 3 takes six round trips (600 ms), so the window may see no new grant")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the hash key expires at once, another owner enters while the holder still works")},
			{"random", mayBreak("a clock jump expires the hash mid-hold; a pause, jump or restart between nested acquires re-creates the hash at count 1 (reentrancy check): seed-dependent")},
		},
	}
}
