//go:build !race

package locktest_test

// raceEnabled: this test binary runs under the race detector.
const raceEnabled = false
