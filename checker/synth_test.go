package checker

import (
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/synth"
)

// synthSpec describes a synthetic history for the checker benchmarks (see
// synth.Spec).
type synthSpec struct {
	ops, keys, clients, plants int
	seed                       uint64
	blocking                   bool
}

// synthHistory is synth.Generate: the header, the operations in completion
// order and how many violations were planted.
func synthHistory(s synthSpec) (history.Header, []history.Operation, int) {
	return synth.Generate(synth.Spec{Ops: s.ops, Keys: s.keys, Clients: s.clients, Plants: s.plants, Seed: s.seed, Blocking: s.blocking})
}
