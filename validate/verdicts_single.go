package validate

// singleNodeVerdicts are the rows of the single-node SET-based locks the
// articles lockbench grew from build up step by step: naive (SETNX, then
// EXPIRE; DEL), set-nx-px (SET NX PX; DEL) and token-lua (SET NX PX; a Lua
// compare-and-delete). None renews, checks its validity or fences, so any
// fault that outlasts the TTL breaks them.
func singleNodeVerdicts() map[string][]row {
	return map[string][]row{
		"naive": {
			{"baseline", safe("critical sections are far shorter than the TTL and nobody crashes: every strategy must be exclusive")},
			{"long-cs", broken("the key expires mid-CS; the next owner enters while the slow one still writes (and its DEL frees another's lock)")},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Break,
				Reason: "the client dies after SETNX and before EXPIRE: the key never expires, a deadlock"}},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Break, Resource: Break, Liveness: Hold, DuringFaults: NotGranting,
				Reason: lateUncheckedDel}},
			{"failover-lost-write", broken("SETNX and EXPIRE reached only the dead primary: " + lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("cut off from Redis past the TTL, the holder still believes it holds: the key expires, another owner enters, the cut-off one writes on reconnect")},
			{"latency", keepsGranting("every client sees the same +100 ms round trip to the one node, so grants stay ordered: a late reply (+50 ms) shortens the lease to TTL−50 ms, still far longer than a 12.5 ms critical section")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once (Redis expires by the wall clock), another owner enters while the holder still works")},
			{"random", Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk,
				Reason: "a clock jump during a critical section lets another owner in; a cut or pause between SETNX and EXPIRE can leave a key without TTL: seed-dependent"}},
		},
		"set-nx-px": {
			{"baseline", safe("critical sections are far shorter than the TTL: the unchecked DEL never meets another owner's key")},
			{"long-cs", broken("the key expires mid-CS; the next owner enters; the slow owner's DEL deletes the new owner's lock")},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; SET NX PX set the TTL atomically, so the key expires and others go on")},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Break, Resource: Break, Liveness: Hold, DuringFaults: NotGranting,
				Reason: lateUncheckedDel}},
			{"failover-lost-write", broken(lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("cut off from Redis past the TTL, the holder still believes it holds: the key expires, another owner enters, the cut-off one writes on reconnect")},
			{"latency", keepsGranting("every client sees the same delay: the DEL reaches the node 112 ms after the SET, while the owner's own key (TTL 250 ms) is still there")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder still works")},
			{"random", mayBreak("a clock jump during a critical section expires the key and lets another owner in, and the holder's DEL then frees the newcomer's lock: seed-dependent")},
		},
		"token-lua": {
			{"baseline", safe("no fault: SET NX PX grants one owner at a time")},
			{"long-cs", broken("the key expires mid-CS and nothing renews or checks it: the slow owner writes over the next one")},
			{"gc-pause", broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake")},
			{"crash-between", safe("the holder dies inside its CS; the key expires after the TTL")},
			{"node-restart", broken(lostOnRestart + "; both read before either writes: a lost update")},
			{"node-restart-delayed", safe(delayedRestart)},
			{"node-restart-aof", safe(aofReloads)},
			{"node-pause", Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, DuringFaults: NotGranting,
				Reason: pausedNode + "; the holder's late release is token-checked"}},
			{"failover-lost-write", broken(lostAtFailover)},
			{"sentinel-failover", broken(lostAtSentinelFailover)},
			{"partition-holder", broken("cut off from Redis past the TTL, the holder still believes it holds: the key expires, another owner enters, the cut-off one writes on reconnect")},
			{"latency", keepsGranting("every client sees the same delay: a reply 50 ms late shortens the lease to TTL−50 ms, far longer than a hold; an overlap would need one client's reply TTL−CS later than another's")},
			{"clock-jump", broken("the server's clock jumps past the TTL: the key expires at once, another owner enters while the holder, within its lease, still works (Kleppmann 2016)")},
			{"random", mayBreak("a clock jump during a critical section expires the key and lets another owner in; pauses, cuts and latency alone cannot (holds are far shorter than the TTL): seed-dependent")},
		},
	}
}
