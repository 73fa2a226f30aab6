package witness

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/history"
)

// ReasonWitness is a reasons check witness: a release or extend that
// failed stating a reason (history.ReasonTaken or history.ReasonExpired)
// which the server state, as the observer read it before the call and as
// the history allows it to have changed until the call returned, rules
// out. Times are ns since the run started.
type ReasonWitness struct {
	Key string `json:"key"`
	// Call is the release or extend, with its Reason.
	Call *history.Operation `json:"call"`
	// ReadNs is the invoke of the observer's last answered pass over the
	// key that completed before the call was invoked; Reads are its
	// answered reads, one per node.
	ReadNs int64        `json:"read_ns"`
	Reads  []ReasonRead `json:"reads"`
	// Could is what the key could hold while the call ran, every node taken
	// together: some of "gone", "the caller's token", "another owner's
	// token".
	Could []string `json:"could"`
}

// ReasonRead is one node's answer in a ReasonWitness's read.
type ReasonRead struct {
	Node string `json:"node"`
	// Token is the token the key held ("" when absent); PTTLMs its PTTL
	// in ms (-1: no TTL, -2: no key).
	Token  string `json:"token,omitempty"`
	PTTLMs int64  `json:"pttl_ms"`
}

// String is the witness in one line, times in ms since run start.
func (w ReasonWitness) String() string {
	c := w.Call
	var found []string
	for _, r := range w.Reads {
		switch {
		case r.Token == "":
			found = append(found, r.Node+" no key")
		case r.Token == c.Token:
			found = append(found, fmt.Sprintf("%s the caller's token, PTTL %d ms", r.Node, r.PTTLMs))
		default:
			found = append(found, fmt.Sprintf("%s token %q, PTTL %d ms", r.Node, r.Token, r.PTTLMs))
		}
	}
	return fmt.Sprintf("%s: c%d's %s of token %q at [%s, %s] ms failed saying %q, but the key could only be %s while it ran: the observer read at %s ms found %s, and no other owner's acquire, release, renewal or server fault came between",
		w.Key, c.Client, c.Kind, c.Token, ms(c.Invoke), ms(c.Complete), c.Reason, strings.Join(w.Could, " or "), ms(w.ReadNs), strings.Join(found, "; "))
}
