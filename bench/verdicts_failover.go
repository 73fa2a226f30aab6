package bench

// failoverVerdicts covers the replica promotion and Sentinel failover scenarios: scenario → strategy → expectation.
func failoverVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{}
}

// failoverNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
func failoverNamed() []string {
	return nil
}
