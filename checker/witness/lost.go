package witness

import (
	"fmt"

	"github.com/lockbench/lockbench/history"
)

// LostWitnessKind names what a lost witness shows.
type LostWitnessKind string

// Lost witness kinds.
const (
	// LostLate: the lock signalled lost, but after the bound (checker.LostBound)
	// from the moment its lease could no longer be renewed.
	LostLate LostWitnessKind = "late"
	// LostNever: the lease could no longer be renewed, and the holder kept
	// holding past the bound without a lost signal.
	LostNever LostWitnessKind = "never"
	// LostAfterRelease: the lock signalled lost for a lease whose release
	// had completed ok.
	LostAfterRelease LostWitnessKind = "after-release"
)

// LostWitness is a lost check witness. Times are ns since the run started.
type LostWitness struct {
	Key  string          `json:"key"`
	Kind LostWitnessKind `json:"kind"`
	// Hold is the hold whose lease it concerns.
	Hold HoldRef `json:"hold"`
	// Lost is the lost signal (absent for never).
	Lost *history.Operation `json:"lost,omitempty"`
	// Release (after-release) is the release that completed ok before it.
	Release *history.Operation `json:"release,omitempty"`
	// Since (late, never) is when the lease could no longer be renewed:
	// the last successful renewal's completion (or the grant's) plus the
	// TTL, or the completion of the observer's read that found the key
	// gone or another owner's (Evidence says which); DeadlineNs is Since
	// plus LostBound, moved past every fault window in force meanwhile.
	SinceNs    int64  `json:"since_ns,omitempty"`
	DeadlineNs int64  `json:"deadline_ns,omitempty"`
	Evidence   string `json:"evidence,omitempty"`
	// HeldUntilNs (never) is when the holder stopped holding: its release
	// or crash, or the end of the history when it never did.
	HeldUntilNs int64 `json:"held_until_ns,omitempty"`
}

// String is the witness in one line, times in ms since run start.
func (w LostWitness) String() string {
	h := w.Hold
	switch w.Kind {
	case LostAfterRelease:
		return fmt.Sprintf("%s: c%d h%d: lost signalled at %s ms for a lease whose release completed ok at %s ms",
			w.Key, h.Client, h.Hold, ms(w.Lost.Invoke), ms(w.Release.Complete))
	case LostLate:
		return fmt.Sprintf("%s: c%d h%d: lost signalled at %s ms, after its deadline %s ms (the lease could not be renewed since %s ms: %s)",
			w.Key, h.Client, h.Hold, ms(w.Lost.Invoke), ms(w.DeadlineNs), ms(w.SinceNs), w.Evidence)
	default:
		return fmt.Sprintf("%s: c%d h%d: no lost signal though the lease could not be renewed since %s ms (%s); the holder kept holding until %s ms, past its deadline %s ms",
			w.Key, h.Client, h.Hold, ms(w.SinceNs), w.Evidence, ms(w.HeldUntilNs), ms(w.DeadlineNs))
	}
}
