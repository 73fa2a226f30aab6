package witness

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/history"
)

// OrphanWitness is an orphan check witness: a key that held, after an
// acquire that said it did not grant (result fail), a token that no
// granted acquire returned: the lock said "not done" and it was done, a
// hold nobody knows of. Times are ns since the run started.
type OrphanWitness struct {
	Key   string `json:"key"`
	Token string `json:"token"`
	// Acquire is the failed acquire the token is attributed to: the one
	// that stated it tried it (Operation.Token). nil when the lock states
	// no token: then the token is one no granted acquire returned, on a key
	// no acquire with an unknown outcome had touched before it was read,
	// so only a failed acquire can have written it.
	Acquire *history.Operation `json:"acquire,omitempty"`
	// Nodes are the nodes whose reads found the token; Quorum is true when
	// a majority of the nodes held it in one pass (the lock was held; on a
	// single-node lock, the node did).
	Nodes  []string `json:"nodes"`
	Quorum bool     `json:"quorum,omitempty"`
	// FirstSeenNs and LastSeenNs are the first and last reads that found it
	// (their invokes); GoneNs the completion of the first later read in
	// which no node held it, -1 when none came (the run ended first).
	FirstSeenNs int64 `json:"first_seen_ns"`
	LastSeenNs  int64 `json:"last_seen_ns"`
	GoneNs      int64 `json:"gone_ns"`
	// PTTLMs is the key's PTTL at the last read that found the token (-1:
	// no TTL).
	PTTLMs int64 `json:"pttl_ms"`
	// FromNs and ToNs bound how long the key was kept: from the acquire's
	// invoke (the first read, when unattributed) to GoneNs, or when it
	// was never read gone to the last read plus its PTTL (-1: no TTL, the
	// key is kept until something deletes it).
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
}

// String is the witness in one line, times in ms since run start.
func (w OrphanWitness) String() string {
	who := "an acquire that failed (the lock states no token; no acquire with an unknown outcome came before)"
	if a := w.Acquire; a != nil {
		who = fmt.Sprintf("c%d's acquire at [%s, %s] ms, which said fail", a.Client, ms(a.Invoke), ms(a.Complete))
	}
	held := strings.Join(w.Nodes, ", ")
	if w.Quorum {
		held += " (the lock held)"
	} else {
		held += " (fewer than a majority of the nodes)"
	}
	until := "never read gone"
	switch {
	case w.GoneNs >= 0:
		until = fmt.Sprintf("read gone at %s ms", ms(w.GoneNs))
	case w.PTTLMs == -1:
		until = "never read gone, no TTL"
	case w.ToNs >= 0:
		until = fmt.Sprintf("never read gone, PTTL %d ms at the last read: kept until ~%s ms", w.PTTLMs, ms(w.ToNs))
	}
	keptFor := ""
	if w.ToNs >= 0 {
		keptFor = fmt.Sprintf("; kept up to %s ms", ms(w.ToNs-w.FromNs))
	}
	return fmt.Sprintf("%s: token %q of %s, held on %s after it: read at %s..%s ms, %s%s",
		w.Key, w.Token, who, held, ms(w.FirstSeenNs), ms(w.LastSeenNs), until, keptFor)
}
