package chaos

// failoverScenarios are the replication faults: replica promotion with a lost write, Sentinel failover.
func failoverScenarios() []Scenario {
	return nil
}
