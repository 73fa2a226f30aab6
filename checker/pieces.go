package checker

import (
	"time"

	"github.com/anishathalye/porcupine"
)

// Porcupine's search keeps a bitset of the linearized operations of a
// partition per cached state, so time and memory grow with the square of a
// partition's size (40 000 holds on one key: seconds and gigabytes). Each
// key's history is therefore cut into pieces at points where the cut is
// exact, i.e. the whole key is linearizable iff every piece is, and each
// piece is one porcupine partition. Short pieces are merged with the next
// one (merging adjacent pieces is always exact) so that a piece has at least
// a minimum number of operations.

// Minimum piece sizes. Tests lower them to 1 to cut as often as possible.
const (
	minPieceHolds = 64  // exclusion: holds per piece
	minPieceOps   = 128 // resource: operations per piece
)

// pieced is the input of an operation cut into pieces: the piece it
// belongs to, numbered from 0 in the order pieces are built.
type pieced interface{ pieceOf() int }

// partitionByPiece is the porcupine Partition function for inputs that
// implement pieced: one partition per piece, in piece order.
func partitionByPiece(ops []porcupine.Operation) [][]porcupine.Operation {
	var sizes []int
	for _, op := range ops {
		p := op.Input.(pieced).pieceOf()
		for len(sizes) <= p {
			sizes = append(sizes, 0)
		}
		sizes[p]++
	}
	// One backing array for every partition, each sized exactly.
	all := make([]porcupine.Operation, len(ops))
	parts := make([][]porcupine.Operation, len(sizes))
	off := 0
	for p, n := range sizes {
		parts[p] = all[off : off : off+n]
		off += n
	}
	for _, op := range ops {
		p := op.Input.(pieced).pieceOf()
		parts[p] = append(parts[p], op)
	}
	out := parts[:0]
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// flatten joins pieces into one history for porcupine.
func flatten(pieces [][]porcupine.Operation) []porcupine.Operation {
	var n int
	for _, p := range pieces {
		n += len(p)
	}
	ops := make([]porcupine.Operation, 0, n)
	for _, p := range pieces {
		ops = append(ops, p...)
	}
	return ops
}

// batchOps is how many operations checkPieces hands porcupine at once.
const batchOps = 1 << 16

// checkPieces checks pieces (independent partitions) with porcupine in
// batches of about batchOps operations, within timeout in all: Illegal as
// soon as a batch is, Unknown if a batch runs out of time (or none is left),
// Ok when every batch is. Porcupine checks the partitions of one call in
// parallel but builds its search state for all of them first, so one call
// on a long history holds that state for every partition at once; batches
// bound it (the verdict is the same: partitions are independent).
func checkPieces(model porcupine.Model, pieces [][]porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	deadline := time.Now().Add(timeout)
	for start := 0; start < len(pieces); {
		end, n := start, 0
		for end < len(pieces) && (n == 0 || n+len(pieces[end]) <= batchOps) {
			n += len(pieces[end])
			end++
		}
		left := time.Until(deadline)
		if left <= 0 {
			return porcupine.Unknown
		}
		if res := porcupine.CheckOperationsTimeout(model, flatten(pieces[start:end]), left); res != porcupine.Ok {
			return res
		}
		start = end
	}
	return porcupine.Ok
}

// illegalPieces checks pieces one by one and returns the indices of up to
// limit pieces porcupine finds illegal, within timeout in all.
func illegalPieces(model porcupine.Model, pieces [][]porcupine.Operation, timeout time.Duration, limit int) []int {
	deadline := time.Now().Add(timeout)
	var bad []int
	for i, p := range pieces {
		left := time.Until(deadline)
		if left <= 0 || len(bad) == limit {
			break
		}
		if porcupine.CheckOperationsTimeout(model, p, left) == porcupine.Illegal {
			bad = append(bad, i)
		}
	}
	return bad
}

// maxVizPieces bounds the pieces shown in a visualisation.
const maxVizPieces = 10
