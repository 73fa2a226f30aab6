package checker

import (
	"math/rand/v2"

	"github.com/lockbench/lockbench/history"
)

// The checker's history generators, for the tests of package checker_test.

// SynthHistory is synthHistory for ops operations on keys keys by clients
// clients with plants planted violations, from seed.
func SynthHistory(ops, keys, clients, plants int, seed uint64) (history.Header, []history.Operation, int) {
	return synthHistory(synthSpec{ops: ops, keys: keys, clients: clients, plants: plants, seed: seed})
}

// RandomHistory is randomHistory.
func RandomHistory(rng *rand.Rand) []history.Operation { return randomHistory(rng) }

// RandomResourceHistory is randomResourceHistory.
func RandomResourceHistory(rng *rand.Rand, mode string) []history.Operation {
	return randomResourceHistory(rng, mode)
}
