package plots

import (
	"fmt"
	"math"
	"sort"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/results"
)

// MaxTimelineKeys is the most keys of one run that get a timeline when no
// key has a witness; every key with a witness gets one, up to
// MaxWitnessKeys.
const (
	MaxTimelineKeys = 3
	MaxWitnessKeys  = 8
)

// maxPanels is the most windows (panels) of one timeline; TimelineWindows
// merges the closest ones beyond it.
const maxPanels = 4

// nsToMs converts ns since run start to ms since run start.
func nsToMs(ns int64) float64 { return float64(ns) / 1e6 }

// WitnessMarks are the marks of a run's stored witnesses on key: each
// exclusion witness as a MarkBothHeld over its interval both held
// (both_from_ns..both_to_ns) on both holders' rows, each resource witness
// over from_ns..to_ns (the accepted write, on the writer's row; a stretch
// without linearization across every row). Fencing, reentrancy and
// liveness witnesses are not drawn on a timeline. Marks come in the
// witnesses' order, exclusion first.
func WitnessMarks(w witness.Witnesses, key string) []Mark {
	var ms []Mark
	for _, o := range w.Exclusion {
		if o.Key != key {
			continue
		}
		clients := []int{o.A.Client}
		if o.B.Client != o.A.Client {
			clients = append(clients, o.B.Client)
		}
		ms = append(ms, Mark{Kind: MarkBothHeld, StartMs: nsToMs(o.BothFromNs), EndMs: nsToMs(o.BothToNs), Clients: clients, Witness: o.String()})
	}
	for _, r := range w.Resource {
		if r.Key != key {
			continue
		}
		m := Mark{Kind: MarkNotLinearizable, StartMs: nsToMs(r.FromNs), EndMs: nsToMs(r.ToNs), Witness: r.String()}
		switch r.Kind {
		case witness.LostUpdate:
			m.Kind = MarkLostUpdate
		case witness.StaleWrite:
			m.Kind = MarkStaleWrite
		}
		if r.Write != nil {
			m.Clients = []int{r.Write.Client}
		}
		ms = append(ms, m)
	}
	return ms
}

// TimelineKeys returns the keys of a run worth a timeline: every key with
// an exclusion or resource witness (up to MaxWitnessKeys, in key order),
// then, up to MaxTimelineKeys keys in all, the others by how many holds
// they had (then by name). A history without holds gives the key of its
// first lock operation.
func TimelineKeys(ops []history.Operation, w witness.Witnesses) []string {
	witnessed := map[string]bool{}
	for _, o := range w.Exclusion {
		witnessed[o.Key] = true
	}
	for _, r := range w.Resource {
		witnessed[r.Key] = true
	}
	count := map[string]int{}
	for _, h := range measure.Holds(ops) {
		count[h.Key]++
	}
	var keys []string
	for k := range count {
		keys = append(keys, k)
	}
	for k := range witnessed {
		if count[k] == 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if witnessed[a] != witnessed[b] {
			return witnessed[a]
		}
		if !witnessed[a] && count[a] != count[b] {
			return count[a] > count[b]
		}
		return a < b
	})
	if len(keys) == 0 {
		for _, op := range ops {
			if op.Kind != history.Nemesis && op.Key != "" {
				return []string{op.Key}
			}
		}
	}
	n := 0
	for n < len(keys) && witnessed[keys[n]] && n < MaxWitnessKeys {
		n++
	}
	return keys[:max(n, min(len(keys), MaxTimelineKeys))]
}

// TimelineWindows chooses the stretches of a run a timeline shows (ms
// since run start): for each fault window, from one TTL before it to the
// latest of two TTLs after it, one TTL after the first grant at or after
// its end (the run's end when no grant follows: a deadlock's whole
// aftermath), and one TTL after the end of every hold it struck (a hold
// in use at some instant of the fault); then, for each mark not inside
// one of those, one TTL on either side of it. Windows are cut to [0,
// endMs] and merged where they overlap; while there are more than 4, the
// two closest are merged (a merged window spans the gap too). With
// neither faults nor marks it is the whole run, [0, endMs].
func TimelineWindows(holds []Interval, faults []Window, marks []Mark, ttlMs, endMs float64) []Span {
	var ws []Span
	for _, f := range faults {
		start, end := f.StartMs, f.EndMs
		if !finite(start) {
			continue
		}
		if !finite(end) || end > endMs {
			end = endMs
		}
		to := end + 2*ttlMs
		next := math.Inf(1)
		for _, h := range holds {
			if h.StartMs >= end {
				next = min(next, h.StartMs)
			}
			he := h.EndMs
			if h.StartMs <= end && (!finite(he) || he >= start) {
				if !finite(he) {
					he = endMs
				}
				to = max(to, he+ttlMs)
			}
		}
		if finite(next) {
			to = max(to, next+ttlMs)
		} else {
			to = endMs
		}
		ws = append(ws, Span{start - ttlMs, to})
	}
	for _, m := range marks {
		inside := false
		for _, w := range ws {
			if w.FromMs <= m.StartMs && m.EndMs <= w.ToMs {
				inside = true
				break
			}
		}
		if !inside {
			ws = append(ws, Span{m.StartMs - ttlMs, m.EndMs + ttlMs})
		}
	}
	if len(ws) == 0 {
		return []Span{{0, endMs}}
	}
	for i := range ws {
		ws[i].FromMs = max(ws[i].FromMs, 0)
		if endMs > 0 {
			ws[i].ToMs = min(ws[i].ToMs, endMs)
		}
		ws[i].ToMs = max(ws[i].ToMs, ws[i].FromMs)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].FromMs < ws[j].FromMs })
	merged := ws[:1]
	for _, w := range ws[1:] {
		last := &merged[len(merged)-1]
		if w.FromMs <= last.ToMs {
			last.ToMs = max(last.ToMs, w.ToMs)
			continue
		}
		merged = append(merged, w)
	}
	for len(merged) > maxPanels {
		best := 0
		for i := 1; i+1 < len(merged); i++ {
			if merged[i+1].FromMs-merged[i].ToMs < merged[best+1].FromMs-merged[best].ToMs {
				best = i
			}
		}
		merged[best].ToMs = max(merged[best].ToMs, merged[best+1].ToMs)
		merged = append(merged[:best+1], merged[best+2:]...)
	}
	return merged
}

// RunTimeline draws the timeline of key in a run (see Timeline) and
// returns the marks drawn: the holds of key from the run's history ops
// (grant to end of use, see measure.Holds), the run's fault windows, and
// the run's stored witnesses on key (WitnessMarks), in the windows
// TimelineWindows chooses with the run's TTL (100 ms if unknown) up to the
// history's last operation (probes and observations left out). The legend notes when the
// run kept only the first witness.MaxWitnesses witnesses of a check.
func RunTimeline(ops []history.Operation, r results.Run, key, prefix string) ([]Mark, error) {
	ttl := r.Config.TTLMs
	if ttl <= 0 {
		ttl = 100
	}
	var end int64
	for _, op := range ops {
		if op.Kind != history.Probe && op.Kind != history.Observe {
			end = max(end, op.Complete)
		}
	}
	var iv []Interval
	for _, h := range measure.Holds(ops) {
		if h.Key == key {
			iv = append(iv, Interval{Client: h.Client, StartMs: nsToMs(h.AcquireComplete), EndMs: nsToMs(h.EndOfUse)})
		}
	}
	var ws []Window
	for _, f := range r.Faults {
		ws = append(ws, Window{Name: f.Name, StartMs: f.StartMs, EndMs: f.EndMs})
	}
	marks := WitnessMarks(r.Witnesses, key)
	note := ""
	if t := r.Witnesses.Total; t.Exclusion > len(r.Witnesses.Exclusion) || t.Resource > len(r.Witnesses.Resource) {
		note = fmt.Sprintf("marks: the first %d witnesses per check of %d exclusion, %d resource", witness.MaxWitnesses, t.Exclusion, t.Resource)
	}
	return Timeline(key, iv, ws, marks, prefix, &TimelineOptions{
		Title:    fmt.Sprintf("%s under %s (seed %d): holders of %s", r.Strategy, r.Scenario, r.Seed, key),
		Windows:  TimelineWindows(iv, ws, marks, ttl, nsToMs(end)),
		Strategy: r.Strategy,
		Note:     note,
	})
}
