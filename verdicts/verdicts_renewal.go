package verdicts

// renewalVerdicts are the rows of watchdog, token-lua plus renewal every
// TTL/3 (Redisson's lock watchdog: Config.lockWatchdogTimeout, 30 s by
// default, is the lease the watchdog renews every third of it while the
// holder's Redisson instance is alive; a lock the watchdog stops extending
// expires after it) and a Lost signal the client honours (lockbench's own:
// Redisson renews the same way but reports no failed renewal to the
// application; docs/strategies.md). Renewal
// carries it through long critical sections and partitions; it cannot help
// when the holder itself stops (a pause stops the watchdog too) or when
// the server forgets the key (restart, failover, clock jump).
func renewalVerdicts() map[string][]row {
	return map[string][]row{
		"watchdog": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time")},
			{"long-cs", safe("renewal every TTL/3 keeps the key alive through a 2×TTL critical section (Redisson's lock watchdog: it extends the lock to lockWatchdogTimeout every third of it while the holder's instance is alive)")},
			{"held-key-loss", safe("its next renewal (within TTL/3, while others are held back) finds the key gone, and Lost stops the holder before its write")},
			{"held-key-retaken", safe(retakenRenewal)},
			{"gc-pause", broken("the pause stops the watchdog too (it runs in the holder's process, as Redisson's does; Kleppmann 2016): the key expires and the paused owner writes on wake")},
			{"crash-between", safe("the holder dies with its watchdog; the key expires after the TTL (Redisson: a lock the watchdog no longer extends expires after lockWatchdogTimeout)")},
			{"node-restart", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: lostOnRestart + "; the next renewal finds the key gone and fires Lost, which stops the stale write only if it comes first (no renewal can renew what the node forgot)"}},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: pausedNode + "; renewals to the paused node time out, and Lost fires once the TTL has passed (lockbench's watchdog, docs/strategies.md: Redisson's watchdog renews the same way but reports no failed renewal to the application)"}},
			{"failover-lost-write", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost with the primary (asynchronous replication: redis.io replication docs) and a second client enters while the first still uses the lock; the first renewal (TTL/3 after the grant) would fire Lost and stop the stale write, but the failover and the next grant usually beat it"}},
			{"sentinel-failover", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold,
				Reason: "the grant is lost at the Sentinel failover (asynchronous replication: redis.io replication docs) and a second client enters while the first still uses the lock; a renewal that reaches the new primary fires Lost and stops the stale write only if it comes before the write"}},
			{"partition-holder", safe("renewals fail while cut off; Lost fires once TTL has passed since the last renewal, and the holder honours it before writing (lockbench's watchdog, docs/strategies.md: Redisson's watchdog renews the same way but reports no loss to the application)")},
			{"partition-blackhole", safe("renewals hang until their budget (TTL/3) while the links black-hole; Lost fires once TTL has passed since the last renewal, and the holder honours it before writing (lockbench's watchdog, docs/strategies.md)")},
			{"latency", keepsGranting("every client sees the same delay and holds end long before the TTL; renewals time out (round trip > TTL/3) but Lost only fires after the TTL, past the hold")},
			{"slow-node", mayBreak(slowRenewal)},
			{"clock-jump", mayBreak("the jump expires the key at once; Lost fires only at the next renewal (every TTL/3), so the holder writes unless a renewal fell between the jump and its write (measured: violated in 10 of 10 seeds of three jumps, not certain per jump)")},
			{"random", mayBreak("a clock jump between two renewals expires the key, or the mix's key loss deletes it, and another owner is granted it before a renewal can find it gone and Lost fire: seed-dependent")},
			{"lost-reply", safe(orphanExpires + "; nothing renews a lease the client never got")},
			{"lost-reply-release", safe(releaseRan)},
			{"lost-reply-extend", safe(extendRan)},
			{"rolling-restart", safe(rollingPrimary)},
			{"cancel", safe(cancelIgnored + "; its renewal starts with the grant")},
			{"renewal-cut", safe(renewalCutLost)},
		},
	}
}

// retakenRenewal is the reason of the renewing locks under
// held-key-retaken: their renewal compares the key's owner.
const retakenRenewal = "its renewal compares the key's owner (compare-and-PEXPIRE): the next renewal after another client took the key (within TTL/3; the new owner kept in its critical section TTL/2) finds another owner's token, and Lost stops the holder before its write"
