package chaos

// networkScenarios are the network and clock faults: partitions, latency, server clock jumps, and the seeded random mix.
func networkScenarios() []Scenario {
	return nil
}
