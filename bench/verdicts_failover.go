package bench

// failoverVerdicts covers the replica promotion and Sentinel failover scenarios: scenario → strategy → expectation.
func failoverVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{}
}
