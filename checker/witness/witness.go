// Package witness holds the witnesses of the checks' violations, as data:
// what each verdict of "violated" rests on (the overlapping holds and the
// interval where both held, the lost update with its operations, the
// orphaned token, ...), each with a one-line String. Package checker
// finds them; reports, timelines, porcupine's annotations and `lockbench
// check` draw violations from them and from nothing else. The types carry
// JSON tags: results.json stores them as they are.
package witness

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// MaxWitnesses is how many witnesses a check keeps in its checker.Result:
// the first MaxWitnesses it finds, in the order each check documents.
// checker.Result.Violations and Witnesses.Total count every witness found,
// kept or not, so a reader knows when the list is cut.
const MaxWitnesses = 100

// Witnesses are the violations the checks found, as data: what each verdict
// of "violated" rests on. Reports, timelines, porcupine's annotations and
// `lockbench check` draw violations from these and from nothing else.
//
// A check keeps witnesses only when its status is Violated; each list holds
// at most MaxWitnesses entries. All times are nanoseconds since the run
// started (the history's clock).
type Witnesses struct {
	// Exclusion are the overlapping pairs of holds, per key in key order, in
	// order of the later hold's acquire completion.
	Exclusion []Overlap `json:"exclusion,omitempty"`
	// Resource are the lost updates and stale writes on the protected
	// resource, per key in key order, in order of the write's completion.
	Resource []ResourceWitness `json:"resource,omitempty"`
	// Fencing are the grants whose fencing token did not increase.
	Fencing []FenceWitness `json:"fencing,omitempty"`
	// Reentrancy are the lock operations that reported a wrong count.
	Reentrancy []CountWitness `json:"reentrancy,omitempty"`
	// Liveness are the keys that a post-run probe found deadlocked or could
	// not acquire, in key order.
	Liveness []ProbeWitness `json:"liveness,omitempty"`
	// Renewal are the leases lost with no fault while their holder ran
	// (checker.Renewal), in time order.
	Renewal []RenewalWitness `json:"renewal,omitempty"`
	// Orphans are the tokens of failed acquires the servers kept, per key
	// in key order, in order of first sight.
	Orphans []OrphanWitness `json:"orphans,omitempty"`
	// Lost are the lost signals late, missing or for a released lease, by
	// key and hold.
	Lost []LostWitness `json:"lost,omitempty"`
	// Extends are the extends invoked after their lease's release, in
	// history order.
	Extends []ExtendWitness `json:"extends,omitempty"`
	// Reasons are the failed releases and extends whose stated reason the
	// server state rules out, in history order.
	Reasons []ReasonWitness `json:"reasons,omitempty"`
	// Total counts, per check, every witness found: above the length of a
	// list when the list was cut at MaxWitnesses.
	Total WitnessCounts `json:"total"`
}

// WitnessCounts counts witnesses per check.
type WitnessCounts struct {
	Exclusion  int `json:"exclusion"`
	Resource   int `json:"resource"`
	Fencing    int `json:"fencing"`
	Reentrancy int `json:"reentrancy"`
	Liveness   int `json:"liveness"`
	Renewal    int `json:"renewal,omitempty"`
	Orphans    int `json:"orphans,omitempty"`
	Lost       int `json:"lost,omitempty"`
	Extends    int `json:"extends,omitempty"`
	Reasons    int `json:"reasons,omitempty"`
}

// HoldRef is a hold (see measure.Hold) as a witness names it. Times are nanoseconds
// since the run started.
type HoldRef struct {
	// Client is the logical client; Hold the hold id (Operation.Hold).
	Client int   `json:"client"`
	Hold   int64 `json:"hold"`
	// Fence is the grant's fencing token (0: none).
	Fence int64 `json:"fence,omitempty"`
	// AcquireInvokeNs and AcquireCompleteNs bound the granting acquire.
	AcquireInvokeNs   int64 `json:"acquire_invoke_ns"`
	AcquireCompleteNs int64 `json:"acquire_complete_ns"`
	// EndOfUseNs is the hold's end of use (see measure.Hold.EndOfUse).
	EndOfUseNs int64 `json:"end_of_use_ns"`
	// ReleaseCompleteNs is when the lock was certainly given back; -1 when
	// that is unbounded (release outcome unknown, no release, a crash).
	ReleaseCompleteNs int64 `json:"release_complete_ns"`
	// Crashed is true when the client crashed inside the hold.
	Crashed bool `json:"crashed,omitempty"`
}

// Overlap is an exclusion witness: two holds of one key that conflict under
// the sweep line's rule (A.AcquireComplete < B.EndOfUse and
// B.AcquireComplete < A.EndOfUse; see checker.Exclusion), and the interval where
// both clients certainly held the key.
type Overlap struct {
	// Key is the lock key.
	Key string `json:"key"`
	// A is the hold granted first (the earlier acquire completion; on a tie
	// the earlier end of use), B the other.
	A HoldRef `json:"a"`
	B HoldRef `json:"b"`
	// BothFromNs and BothToNs bound the closed interval where both held:
	// [max(A, B acquire complete), min(A, B end of use)], ns since run
	// start. BothFromNs <= BothToNs; they are equal only when one hold is a
	// single instant (granted and used up at once) strictly inside the
	// other: holds that merely touch do not conflict.
	BothFromNs int64 `json:"both_from_ns"`
	BothToNs   int64 `json:"both_to_ns"`
}

// String is the witness in one line, times in ms since run start.
func (o Overlap) String() string {
	return fmt.Sprintf("%s: c%d h%d [%s, %s] overlaps c%d h%d [%s, %s] (grant..end of use, ms); both held [%s, %s] ms",
		o.Key, o.A.Client, o.A.Hold, ms(o.A.AcquireCompleteNs), ms(o.A.EndOfUseNs),
		o.B.Client, o.B.Hold, ms(o.B.AcquireCompleteNs), ms(o.B.EndOfUseNs), ms(o.BothFromNs), ms(o.BothToNs))
}

// ResourceWitnessKind names what a resource witness shows.
type ResourceWitnessKind string

// Resource witness kinds.
const (
	// LostUpdate: an accepted write whose read value (Prev) was not the
	// resource's current value: the update it overwrote is lost.
	LostUpdate ResourceWitnessKind = "lost-update"
	// StaleWrite: a write the fencing check had to reject but that was
	// accepted: its fencing token was below one the resource had accepted
	// (in an operation that completed before the write was invoked).
	StaleWrite ResourceWitnessKind = "stale-write"
	// NotLinearizable: porcupine found no linearization of a stretch of a
	// key's resource operations (e.g. a stale read) and neither of the
	// kinds above explains it; FromNs..ToNs spans the stretch.
	NotLinearizable ResourceWitnessKind = "not-linearizable"
)

// ResourceWitness is a resource witness: a lost update, a stale write, or a
// stretch of operations porcupine rejects. Operations are copied from the
// history as recorded (times in ns since run start).
type ResourceWitness struct {
	// Key is the lock key guarding the resource value.
	Key  string              `json:"key"`
	Kind ResourceWitnessKind `json:"kind"`
	// Write is the accepted write (nil for not-linearizable).
	Write *history.Operation `json:"write,omitempty"`
	// Read is the read of the writer's hold that the write's value was
	// computed from (the latest accepted read of that hold completed before
	// the write was invoked); nil if none was recorded.
	Read *history.Operation `json:"read,omitempty"`
	// Overwrote (lost update) is the accepted write that set the value
	// Write replaced without having read it; nil when that value was the
	// resource's initial value 0.
	Overwrote *history.Operation `json:"overwrote,omitempty"`
	// Current (lost update) is the value the resource held when Write was
	// applied; 0 for the other kinds.
	Current int64 `json:"current"`
	// FencedBy (stale write, or a lost update that is also one) is the
	// accepted operation whose higher fencing token completed before Write
	// was invoked; nil otherwise.
	FencedBy *history.Operation `json:"fenced_by,omitempty"`
	// FromNs and ToNs bound what the witness marks on a timeline, ns since
	// run start: the write's invoke and completion, or for not-linearizable
	// the first invoke and last finite completion of the stretch.
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
	// Ops (not-linearizable) is how many operations the stretch holds.
	Ops int `json:"ops,omitempty"`
}

// String is the witness in one line, times in ms since run start.
func (w ResourceWitness) String() string {
	switch w.Kind {
	case LostUpdate:
		op := w.Write
		by := "the initial value"
		if w.Overwrote != nil {
			by = fmt.Sprintf("set by c%d h%d at %s ms", w.Overwrote.Client, w.Overwrote.Hold, ms(w.Overwrote.Complete))
		}
		stale := ""
		if f := w.FencedBy; f != nil {
			stale = fmt.Sprintf("; and stale: the resource had accepted fence %d from c%d h%d", f.Fence, f.Client, f.Hold)
		}
		return fmt.Sprintf("%s: lost update: c%d h%d wrote %d→%d (fence %d) at [%s, %s] ms, but the value was %d (%s)%s",
			w.Key, op.Client, op.Hold, op.Prev, op.Value, op.Fence, ms(op.Invoke), ms(op.Complete), w.Current, by, stale)
	case StaleWrite:
		op, f := w.Write, w.FencedBy
		return fmt.Sprintf("%s: stale write accepted: c%d h%d wrote %d→%d with fence %d at [%s, %s] ms, after the resource accepted fence %d from c%d h%d (%s, done at %s ms)",
			w.Key, op.Client, op.Hold, op.Prev, op.Value, op.Fence, ms(op.Invoke), ms(op.Complete), f.Fence, f.Client, f.Hold, f.Kind, ms(f.Complete))
	default:
		return fmt.Sprintf("%s: %d resource operations in [%s, %s] ms have no linearization (porcupine): a stale read or a fencing decision the model forbids",
			w.Key, w.Ops, ms(w.FromNs), ms(w.ToNs))
	}
}

// FenceWitness is a fencing witness: a grant whose fencing token does not
// increase over an earlier grant of the key.
type FenceWitness struct {
	Key string `json:"key"`
	// Grant is the grant whose token did not increase.
	Grant HoldRef `json:"grant"`
	// Earlier is the grant it did not increase over: one whose acquire
	// completed before Grant's was invoked with a token at least as high
	// (Shared false), or one whose acquire overlapped Grant's, completed
	// first and carries the same token (Shared true).
	Earlier HoldRef `json:"earlier"`
	Shared  bool    `json:"shared,omitempty"`
}

// String is the witness in one line, times in ms since run start.
func (w FenceWitness) String() string {
	a, b := w.Earlier, w.Grant
	if w.Shared {
		return fmt.Sprintf("%s: c%d h%d and c%d h%d, granted at %s and %s ms, share fence %d",
			w.Key, a.Client, a.Hold, b.Client, b.Hold, ms(a.AcquireCompleteNs), ms(b.AcquireCompleteNs), b.Fence)
	}
	return fmt.Sprintf("%s: c%d h%d got fence %d at %s ms, not above fence %d of c%d h%d granted at %s ms, before it asked (%s ms)",
		w.Key, b.Client, b.Hold, b.Fence, ms(b.AcquireCompleteNs), a.Fence, a.Client, a.Hold, ms(a.AcquireCompleteNs), ms(b.AcquireInvokeNs))
}

// CountWitness is a reentrancy witness: a successful acquire or release
// whose reported count (Op.Count) does not match its nesting depth.
type CountWitness struct {
	// Op is the operation as recorded.
	Op *history.Operation `json:"op"`
	// Want is the count its depth implies: Depth after an acquire, Depth-1
	// after a release.
	Want int `json:"want"`
}

// String is the witness in one line, times in ms since run start.
func (w CountWitness) String() string {
	op := w.Op
	return fmt.Sprintf("%s: c%d h%d %s at depth %d reported count %d, want %d (at %s ms)",
		op.Key, op.Client, op.Hold, op.Kind, op.Depth, op.Count, w.Want, ms(op.Complete))
}

// ProbeWitness is a liveness witness: a key the harness's post-run probe
// found without a TTL (a deadlock) or could not acquire within TTL + 1 s.
type ProbeWitness struct {
	Key string `json:"key"`
	// Probe is the probe operation as recorded (Value: the key's PTTL in ms
	// before probing; result ok when it acquired).
	Probe *history.Operation `json:"probe"`
	// NoTTL is true when the key had no TTL (PTTL -1) and the probe could
	// not acquire it: a deadlock that never ends by itself.
	NoTTL bool `json:"no_ttl,omitempty"`
	// TTLMs is the run's lock TTL in ms, for the probe's limit of TTL + 1 s.
	TTLMs int64 `json:"ttl_ms"`
}

// String is the witness in one line, times in ms since run start.
func (w ProbeWitness) String() string {
	op := w.Probe
	if w.NoTTL {
		return fmt.Sprintf("%s: left without a TTL after the run (PTTL -1) and not acquirable within TTL+1s (%d ms): deadlock; probe %s at %s ms", w.Key, w.TTLMs+1000, op.Result, ms(op.Invoke))
	}
	why := ""
	if op.Error != "" {
		why = ": " + op.Error
	}
	return fmt.Sprintf("%s: not acquirable within TTL+1s (%d ms) after the run (PTTL %d ms, probe %s%s) at %s ms", w.Key, w.TTLMs+1000, op.Value, op.Result, why, ms(op.Invoke))
}

// ms formats a time in ns since run start as milliseconds; measure.Inf as
// "+inf".
func ms(ns int64) string {
	if ns == measure.Inf {
		return "+inf"
	}
	return fmt.Sprintf("%.3f", float64(ns)/float64(time.Millisecond))
}
