package verdicts

// fencedVerdicts are the rows of fenced, token-lua plus a fencing token from
// an INCR in the same script; the protected resource rejects writes with a
// token below the highest it has seen. Exclusion breaks as for token-lua,
// but the resource stays safe, unless the fault loses the fencing counter
// itself (a restart without persistence, a failover).
func fencedVerdicts() map[string][]row {
	return map[string][]row{
		"fenced": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time")},
			{"long-cs", fencedOnly("exclusion breaks when the key expires mid-CS, but the resource rejects the slow owner's older fencing token")},
			{"held-key-loss", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Reason: "the key is deleted under the holder and another client is granted it; the fence counter survives, so the holder's older token is rejected once the new owner has written, and accepted if the holder writes first (fencing on writes only): timing"}},
			{"gc-pause", fencedOnly("exclusion breaks under the pause, but the resource rejects the woken owner's older fencing token (Kleppmann 2016)")},
			{"crash-between", safe("the holder dies inside its CS; the key expires after the TTL")},
			{"node-restart", Expectation{Exclusion: Break, Resource: Hold, Liveness: Hold, Fencing: Break,
				Reason: "the restart loses the lock and the fencing counter with it: the next holder's token restarts at 1 (fencing tokens must come from durable storage, Kleppmann 2016), so the resource rejects its writes and stays safe"}},
			{"node-restart-delayed", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, Fencing: Break,
				Reason: delayedRestart + "; but the restart still loses the fencing counter, so tokens restart at 1 and the resource rejects the new holders' writes (safe, not live)"}},
			{"node-restart-aof", safe(aofReloads + ", the fencing counter too")},
			{"node-pause", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: pausedNode + "; the fencing counter survives the pause"}},
			{"failover-lost-write", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Fencing: Break,
				Reason: "the fencing counter's INCRs since the replica last synced are lost with the grant (fencing tokens need a store that survives failover, Kleppmann 2016): when only the struck grant's was lost, the next holder gets the same token and the resource accepts both writes (a lost update); when earlier grants' were lost too (measured: 16 at TTL 100 ms on a loaded machine, make bench 2026-12-06, seed 1), its token is below the highest written and the resource rejects its writes (safe, not live): timing"}},
			{"sentinel-failover", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Fencing: Break,
				Reason: "the promoted replica never saw the fencing counter's INCRs since it last synced (Kleppmann 2016: fencing tokens need a consensus-backed store): the next holder gets the struck holder's token when only that grant's was lost, and the resource accepts both writes; a lower one, rejected, when more were lost: timing, as in failover-lost-write"}},
			{"partition-holder", fencedOnly("exclusion breaks when the key expires behind the holder, kept in its critical section for 2×TTL while its links refuse connections, but the resource is reachable and rejects its older fencing token, written after the next holder's (the scenario waits for that holder's release) (Kleppmann 2016)")},
			{"partition-blackhole", fencedOnly("exclusion breaks when the key expires behind the holder, kept in its critical section for 2×TTL while its links black-hole, but the resource is reachable and rejects its older fencing token, written after the next holder's (Kleppmann 2016)")},
			{"latency", keepsGranting("every client sees the same delay: grants stay ordered and fencing tokens increase; slower, not unsafe")},
			{"slow-node", Expectation{Exclusion: Break, Resource: AtRisk, Liveness: Hold, Reason: slowTrusted + "; its fencing token (taken when the SET ran) is older than the next owner's, so the resource refuses the late write when the next owner wrote first, which the scenario waits for at most TTL/2"}},
			{"clock-jump", fencedOnly("the jump expires the key and another owner enters (exclusion breaks), but the resource rejects the holder's older fencing token")},
			{"random", Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, Fencing: AtRisk,
				Reason: "a clock jump, or the mix's key loss, lets two owners overlap; fencing on writes only still loses an update when the older holder writes first, and a restart (no persistence) resets the fencing counter"}},
			{"lost-reply", safe(orphanExpires + "; the fencing number the lost grant took is skipped, and tokens still increase")},
			{"lost-reply-release", safe(releaseRan)},
			{"cancel", safe(cancelIgnored + "; the script takes the fencing number with the grant")},
		},
	}
}
