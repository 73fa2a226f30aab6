package witness

import (
	"fmt"
)

// Kinds of renewal witness.
const (
	// RenewalLost: the lock said the lease was lost (a lost operation).
	RenewalLost = "lost"
	// RenewalFailed: a renewal (extend) certainly failed.
	RenewalFailed = "renewal-failed"
	// RenewalExpired: the server no longer held the holder's token while
	// the holder ran (observe operations: the key gone, or another
	// owner's, on a majority of the nodes).
	RenewalExpired = "expired-under-holder"
)

// RenewalWitness is a lease lost with no fault to explain it, while its
// holder still ran: the lock's renewal did not keep it.
type RenewalWitness struct {
	Key    string `json:"key"`
	Client int    `json:"client"`
	Hold   int64  `json:"hold"`
	// Kind is RenewalLost, RenewalFailed or RenewalExpired.
	Kind string `json:"kind"`
	// AtNs is when it happened (the operation's completion), ns since
	// run start; GrantedNs when the hold's acquire completed.
	AtNs      int64 `json:"at_ns"`
	GrantedNs int64 `json:"granted_ns"`
	// Detail says what the server or the lock said, e.g. "n1: key absent
	// (PTTL -2)", "extend failed: expired".
	Detail string `json:"detail,omitempty"`
}

// String is the witness in one line, times in ms since run start.
func (w RenewalWitness) String() string {
	what := map[string]string{RenewalLost: "the lock said lost", RenewalFailed: "a renewal failed", RenewalExpired: "the server no longer held its token"}[w.Kind]
	s := fmt.Sprintf("%s: c%d h%d granted at %s ms: %s at %s ms (%s ms into the hold) with no fault, while the holder ran", w.Key, w.Client, w.Hold,
		ms(w.GrantedNs), what, ms(w.AtNs), ms(w.AtNs-w.GrantedNs))
	if w.Detail != "" {
		s += ": " + w.Detail
	}
	return s
}
