package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// LivenessFigures describe availability during a run. Its fields match
// results.LivenessFigures, so one converts to the other.
type LivenessFigures struct {
	// LongestUnavailableMs is the longest time, over all keys that were
	// asked for, between two consecutive grants of the key (acquire
	// completions of holds), counting from the run's first operation to the
	// first grant and from the last grant to the run's last operation
	// (probes excluded), in ms. A key never granted counts the whole run.
	LongestUnavailableMs float64 `json:"longest_unavailable_ms"`
	// UnavailableMsByKey is the same figure for each key, in ms.
	UnavailableMsByKey map[string]float64 `json:"unavailable_ms_by_key,omitempty"`
	// RecoveryMs is the time from the end of the last nemesis window to the
	// next grant of any key, in ms; -1 if no grant follows it, 0 if the run
	// had no nemesis window.
	RecoveryMs float64 `json:"recovery_ms"`
	// FailedShare and InfoShare are the shares (0..1) of whole-lock acquire
	// attempts whose result was fail and info; 0 when there were none.
	FailedShare float64 `json:"failed_share"`
	InfoShare   float64 `json:"info_share"`
	// Deadlocked lists, sorted, the keys whose post-run probe could not
	// acquire within TTL + 1 s (with or without a TTL on the server).
	Deadlocked []string `json:"deadlocked,omitempty"`
	// OrphanFigures are the keys left holding the token of an acquire with
	// an unknown outcome (see Orphans).
	OrphanFigures
}

// Liveness checks the harness's post-run probes and computes the run's
// liveness figures (see LivenessFigures). A Probe operation's Value is the
// key's PTTL in ms before probing (-1: no TTL on the server; -2: no key)
// and its result is ok when the probe acquired the key within TTL + 1 s,
// fail when an attempt was refused until then (the key stayed held), info
// when no attempt was answered. The probe's result decides, not the PTTL:
// a key the probe acquired is not deadlocked, even without a server TTL (a
// lock that keeps its expiry in the key's value, GETSET-style, lets a new
// owner take an expired key that Redis keeps for ever); a key the probe
// could not acquire is, with or without a TTL. The check is violated if
// any probe was refused until its deadline; Result.Violations counts such
// keys, each a witness (witness.ProbeWitness, with its first failing probe; NoTTL
// when the key had no TTL), in key order. A probe none of whose attempts
// was answered (result info) says nothing about its key: without a
// violation the check is then inconclusive. Skipped when the history has
// no probes; the figures are computed either way.
func Liveness(h history.Header, ops []history.Operation) (Result, LivenessFigures) {
	return livenessOf(h, ops, measure.Holds(ops))
}

// livenessOf is Liveness with the history's holds (measure.Holds(ops)) given.
func livenessOf(h history.Header, ops []history.Operation, hs []measure.Hold) (Result, LivenessFigures) {
	f, faults := livenessFigures(ops, hs)
	bad := map[string]bool{}
	var r Result
	var found []witness.ProbeWitness
	probed, unknown, noTTL := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		if op.Kind != history.Probe {
			continue
		}
		probed[op.Key] = true
		switch {
		case op.Result == history.Info:
			unknown[op.Key] = true // no attempt answered: nothing is known
			continue
		case op.Result == history.OK:
			if op.Value == -1 {
				noTTL[op.Key] = true // acquired: its expiry lives elsewhere
			}
			continue
		case bad[op.Key]:
			continue
		}
		bad[op.Key] = true
		found = append(found, witness.ProbeWitness{Key: op.Key, Probe: opRef(op), NoTTL: op.Value == -1, TTLMs: h.TTLMs})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Key < found[j].Key })
	for _, w := range found {
		f.Deadlocked = append(f.Deadlocked, w.Key)
	}
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	if r.Violations > 0 {
		r.Witnesses = witness.Witnesses{Liveness: keep(found), Total: witness.WitnessCounts{Liveness: r.Violations}}
	}
	gap := fmt.Sprintf("longest gap between grants %.3f ms", f.LongestUnavailableMs)
	switch {
	case !faults:
		gap += ", no nemesis"
	case f.RecoveryMs < 0:
		gap += ", no grant after the last fault"
	default:
		gap += fmt.Sprintf(", recovery %.3f ms after the last fault", f.RecoveryMs)
	}
	switch {
	case len(probed) == 0:
		r.Status = Skipped
		r.Message = "no post-run probes; " + gap
	case len(bad) > 0:
		r.Status = Violated
		verb := "are"
		if len(bad) == 1 {
			verb = "is"
		}
		r.Message = fmt.Sprintf("%d of %s %s deadlocked or not acquirable after the run; %s", len(bad), probedKeys(len(probed)), verb, gap)
	case len(unknown) > 0:
		r.Status = Inconclusive
		r.Message = fmt.Sprintf("%d of %s could not be probed: no acquire attempt was answered within TTL + 1 s (timeouts); %s", len(unknown), probedKeys(len(probed)), gap)
	case len(noTTL) > 0:
		r.Status = OK
		r.Message = fmt.Sprintf("%s acquirable after the run; %d without a server TTL (PTTL -1) but acquired by the probe: the lock keeps its expiry elsewhere, not a deadlock; %s", probedKeys(len(probed)), len(noTTL), gap)
	default:
		r.Status = OK
		r.Message = fmt.Sprintf("%s acquirable after the run, none without TTL; %s", probedKeys(len(probed)), gap)
	}
	return r, f
}

// probedKeys is "1 probed key" or "N probed keys".
func probedKeys(n int) string {
	if n == 1 {
		return "1 probed key"
	}
	return fmt.Sprintf("%d probed keys", n)
}

// livenessFigures computes the figures and whether the run had a nemesis window.
func livenessFigures(ops []history.Operation, hs []measure.Hold) (LivenessFigures, bool) {
	var f LivenessFigures
	first, last := int64(measure.Inf), int64(-1)
	nemesisEnd := int64(-1)
	var attempts, failed, info int
	keys := map[string]bool{}
	for _, op := range ops {
		if op.Kind == history.Probe || op.Kind == history.Observe {
			continue // the harness's reads, not the run's
		}
		first, last = min(first, op.Invoke), max(last, op.Complete)
		switch {
		case op.Kind == history.Nemesis:
			nemesisEnd = max(nemesisEnd, op.Complete)
		case op.Kind == history.Acquire && isWholeLock(op):
			keys[op.Key] = true
			attempts++
			switch op.Result {
			case history.Fail:
				failed++
			case history.Info:
				info++
			}
		}
	}
	if attempts > 0 {
		f.FailedShare = float64(failed) / float64(attempts)
		f.InfoShare = float64(info) / float64(attempts)
	}
	grants := map[string][]int64{}
	recovery := int64(-1)
	for _, h := range hs {
		grants[h.Key] = append(grants[h.Key], h.AcquireComplete)
		if nemesisEnd >= 0 && h.AcquireComplete >= nemesisEnd && (recovery < 0 || h.AcquireComplete-nemesisEnd < recovery) {
			recovery = h.AcquireComplete - nemesisEnd
		}
	}
	switch {
	case nemesisEnd < 0:
		f.RecoveryMs = 0
	case recovery < 0:
		f.RecoveryMs = -1
	default:
		f.RecoveryMs = toMs(recovery)
	}
	var longest int64
	for k := range keys {
		g := grants[k]
		sort.Slice(g, func(i, j int) bool { return g[i] < g[j] })
		prev := first
		var kl int64
		for _, t := range g {
			kl = max(kl, t-prev)
			prev = t
		}
		kl = max(kl, last-prev)
		if f.UnavailableMsByKey == nil {
			f.UnavailableMsByKey = map[string]float64{}
		}
		f.UnavailableMsByKey[k] = toMs(kl)
		longest = max(longest, kl)
	}
	f.LongestUnavailableMs = toMs(longest)
	return f, nemesisEnd >= 0
}

func toMs(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
