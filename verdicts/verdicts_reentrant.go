package verdicts

// reentrantVerdicts are the rows of reentrant, the Redisson-style hash lock
// (field = owner, HINCRBY, PEXPIRE): exclusive as token-lua is, with nesting
// counted, and with no renewal, so it breaks where token-lua does.
func reentrantVerdicts() map[string][]row {
	return map[string][]row{
		"reentrant": {
			{"baseline", safe("no fault: the hash lock grants one owner at a time, nesting counted")},
			{"long-cs", broken("no renewal: the hash key expires mid-CS and the next owner enters")},
			{"held-key-loss", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Reason: "the key is deleted under the holder, which runs on until another client is granted it: nothing renews or checks it, and both hold the lock; whether the new owner writes before the holder (a lost update) depends on the timing"}},
			{"gc-pause", broken("a pause past the TTL: the hash key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; the hash key expires after the TTL")},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, DuringFaults: NotGranting,
				Reason: "depends on nesting: with depth ≥ 2 (bench, matrix test) the holder's nested HINCRBY is queued in the paused node and returns after SIGCONT, past the TTL, and its critical section then overlaps the next owner (a Redis call inside the hold acts as a client pause); with depth 1 it holds as token-lua does"}},
			{"failover-lost-write", broken("the hash lock's HINCRBY and PEXPIRE reached only the dead primary: " + lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("no renewal, no check: the scenario keeps the holder in its critical section for 2×TTL while its links refuse connections; the hash key expires, another owner enters, the cut-off one writes on reconnect")},
			{"partition-blackhole", broken("no renewal, no check: the scenario keeps the holder in its critical section for 2×TTL while its links black-hole (calls hang until their budget); the hash key expires, another owner enters, the partitioned one writes once the partition heals")},
			{"latency", safe("every nested acquire and release reaches the node 100 ms after the previous one and renews the hash's TTL (250 ms): counts and exclusion stay intact; a hold of depth 3 takes six round trips (600 ms), so the window may see no new grant")},
			{"slow-node", mayBreak("the hash lock's script runs at once and its reply comes 1.5×TTL late, after the hash expired: the late holder's nested acquires (Redisson re-enters its own field only) find the hash gone or another owner's and may end the hold before its write; one that succeeds re-creates the hash under the next owner's feet: seed-dependent")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the hash key expires at once, another owner enters while the holder still works")},
			{"random", mayBreak("a clock jump expires the hash mid-hold, or the mix's key loss deletes it; a pause, jump or restart between nested acquires re-creates the hash at count 1 (reentrancy check): seed-dependent")},
			{"lost-reply", safe("the script ran (the hash holds the owner's field, count 1) but its reply was lost: the owner's next acquire re-enters its own orphan (count 2) and its holds leave the count one above their nesting until the hash expires by its TTL; the counts stay within the reentrancy check's tolerance for an unknown outcome, and nobody else is granted meanwhile")},
			{"lost-reply-release", safe(releaseRan)},
			{"lost-reply-reentrant", safe("the nested acquire ran (the count went up) but its reply was lost: the owner releases one level fewer than the server counted, so the hash outlives the hold until its TTL (an orphan the owner's own next acquire re-enters); counts stay within the reentrancy check's tolerance for an unknown outcome, and nobody else is granted meanwhile")},
			{"cancel", safe(cancelIgnored + ": the hash script runs once and the hold count is the one the client knows")},
		},
	}
}
