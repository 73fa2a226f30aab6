package measure

import (
	"cmp"
	"math"
	"sort"

	"github.com/lockbench/lockbench/history"
)

// Inf is the time used for an end that is unbounded: a release whose outcome
// is unknown, a hold ended by a crash. It is also porcupine's return time for
// operations with unknown outcome.
const Inf = math.MaxInt64

// Hold is one client's tenure of a lock, as the client believed it: from a
// successful outermost acquire to the end of its use. All times are
// nanoseconds since the run started.
type Hold struct {
	// Client is the logical client; Stream its porcupine stream (ClientId)
	// at the acquire.
	Client int
	Stream int
	// Key is the lock key.
	Key string
	// Hold is the hold id (the outermost acquire's Operation.Hold).
	Hold int64
	// Token and Fence are the owner token and fencing token of the grant
	// (Fence 0: none).
	Token string
	Fence int64
	// AcquireInvoke and AcquireComplete bound the successful outermost acquire.
	AcquireInvoke, AcquireComplete int64
	// EndOfUse is the completion of the client's last resource operation in
	// the hold, or AcquireComplete if it made none; never later than the
	// invoke of its outermost release or its crash, never earlier than
	// AcquireComplete.
	EndOfUse int64
	// ReleaseComplete is when the lock was certainly given back: the
	// earliest completion of an outermost release with a known outcome (ok,
	// or fail: the lock was no longer held). Inf (math.MaxInt64) when the
	// release's outcome is unknown, when there is none, or when the client
	// crashed inside the hold.
	ReleaseComplete int64
	// Crashed is true when a Crash operation ended the hold.
	Crashed bool
}

// isWholeLock reports whether op is a whole-lock operation (not a per-node
// call of a quorum strategy).
func isWholeLock(op history.Operation) bool { return op.Node == "" }

// isOutermost reports whether a lock operation bounds a hold: depth 1, or 0
// for non-reentrant strategies.
func isOutermost(op history.Operation) bool { return op.Depth <= 1 }

// Holds extracts the holds of a history, sorted by AcquireInvoke (then hold
// id). A hold is a whole-lock Acquire with result ok and Depth <= 1 (depth 0:
// non-reentrant); failed and unknown (info) acquires are not holds, since the
// client does not believe it holds the lock. Resource operations (Read,
// Write), outermost releases and crashes are linked to their hold by
// Operation.Hold, which is unique per hold in a history.
//
// End of use is the completion of the hold's last resource operation (the
// acquire's completion if there is none), capped at the invoke of the first
// outermost release and of a crash, and raised to the acquire's completion if
// a malformed history would put it earlier. A crash ends the hold with an
// unbounded release (Inf); so does a release with outcome unknown, or none.
// An acquire with Hold 0 (a foreign history without hold ids) has nothing
// linked: its use ends at its completion and its release is unknown.
//
// A Lost signal or a validity deadline does not end a hold by itself: a
// client that honours them stops using the resource, which shows as an
// earlier end of use; a client that ignores them keeps using it, and that use
// counts.
func Holds(ops []history.Operation) []Hold {
	type links struct {
		lastUse        int64 // completion of the last resource op, -1 if none
		releaseInvoke  int64 // earliest outermost release invoke, Inf if none
		releaseDone    int64 // earliest known-outcome outermost release completion, Inf if none
		crashInvoke    int64 // earliest crash invoke, Inf if none
		crashed        bool
		hasResourceUse bool
	}
	nHolds, top, bottom := 0, int64(0), int64(0)
	for i := range ops {
		if op := &ops[i]; op.Kind == history.Acquire && op.Result == history.OK && isWholeLock(*op) && isOutermost(*op) {
			nHolds++
			top, bottom = max(top, op.Hold), min(bottom, op.Hold)
		}
	}
	// Links live in one slice, found by hold id through a slice when the
	// ids are dense (lockbench numbers holds 1, 2, ...), else a map sized
	// once: no allocation per hold. Only the holds' own ids get links.
	ids := newHoldIndex(nHolds, bottom, top, len(ops))
	all := make([]links, 0, nHolds)
	for i := range ops {
		if op := &ops[i]; op.Kind == history.Acquire && op.Result == history.OK && isWholeLock(*op) && isOutermost(*op) && op.Hold != 0 {
			if _, ok := ids.get(op.Hold); !ok {
				ids.set(op.Hold, int32(len(all)))
				all = append(all, links{lastUse: -1, releaseInvoke: Inf, releaseDone: Inf, crashInvoke: Inf})
			}
		}
	}
	get := func(id int64) *links {
		if i, ok := ids.get(id); ok {
			return &all[i]
		}
		return nil
	}
	for i := range ops {
		op := &ops[i]
		if op.Hold == 0 {
			continue
		}
		switch op.Kind {
		case history.Read, history.Write:
			if l := get(op.Hold); l != nil {
				l.hasResourceUse = true
				l.lastUse = max(l.lastUse, op.Complete)
			}
		case history.Release:
			if !isWholeLock(*op) || !isOutermost(*op) {
				continue
			}
			if l := get(op.Hold); l != nil {
				l.releaseInvoke = min(l.releaseInvoke, op.Invoke)
				if op.Result != history.Info {
					l.releaseDone = min(l.releaseDone, op.Complete)
				}
			}
		case history.Crash:
			if l := get(op.Hold); l != nil {
				l.crashed = true
				l.crashInvoke = min(l.crashInvoke, op.Invoke)
			}
		}
	}

	hs := make([]Hold, 0, nHolds)
	for i := range ops {
		op := &ops[i]
		if op.Kind != history.Acquire || op.Result != history.OK || !isWholeLock(*op) || !isOutermost(*op) {
			continue
		}
		h := Hold{
			Client: op.Client, Stream: op.Stream, Key: op.Key, Hold: op.Hold,
			Token: op.Token, Fence: op.Fence,
			AcquireInvoke: op.Invoke, AcquireComplete: op.Complete,
			EndOfUse: op.Complete, ReleaseComplete: Inf,
		}
		if i, ok := ids.get(op.Hold); ok && op.Hold != 0 {
			l := &all[i]
			if l.hasResourceUse {
				h.EndOfUse = l.lastUse
			}
			h.EndOfUse = min(h.EndOfUse, l.releaseInvoke, l.crashInvoke)
			h.EndOfUse = max(h.EndOfUse, h.AcquireComplete)
			h.Crashed = l.crashed
			if !l.crashed {
				h.ReleaseComplete = max(l.releaseDone, h.EndOfUse)
			}
		}
		hs = append(hs, h)
	}
	sortStable(hs, func(a, b *Hold) int {
		if a.AcquireInvoke != b.AcquireInvoke {
			return cmp.Compare(a.AcquireInvoke, b.AcquireInvoke)
		}
		return cmp.Compare(a.Hold, b.Hold)
	})
	return hs
}

// holdIndex maps hold ids to an index: a slice when the ids are dense
// (at most a few times the history's length), a map otherwise.
type holdIndex struct {
	dense []int32 // -1: absent
	m     map[int64]int32
}

func newHoldIndex(n int, bottom, top int64, ops int) holdIndex {
	if bottom >= 0 && top <= 4*int64(ops)+64 {
		d := make([]int32, top+1)
		for i := range d {
			d[i] = -1
		}
		return holdIndex{dense: d}
	}
	return holdIndex{m: make(map[int64]int32, n)}
}

func (x holdIndex) get(id int64) (int32, bool) {
	if x.m != nil {
		i, ok := x.m[id]
		return i, ok
	}
	if id < 0 || id >= int64(len(x.dense)) || x.dense[id] < 0 {
		return 0, false
	}
	return x.dense[id], true
}

func (x holdIndex) set(id int64, i int32) {
	if x.m != nil {
		x.m[id] = i
		return
	}
	x.dense[id] = i
}

// HoldsByKey groups the indexes of hs by key (each group in hs's order) and
// returns the keys sorted.
func HoldsByKey(hs []Hold) (keys []string, byKey map[string][]int) {
	byKey = map[string][]int{}
	for i, h := range hs {
		if _, ok := byKey[h.Key]; !ok {
			keys = append(keys, h.Key)
		}
		byKey[h.Key] = append(byKey[h.Key], i)
	}
	sort.Strings(keys)
	return keys, byKey
}
