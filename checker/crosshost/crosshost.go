// Package crosshost checks mutual exclusion across the histories that
// several client hosts wrote of one run against a shared deployment
// (lockbench --backend external --shared-keys; `lockbench check` of their
// files together): each host's holds are put on the lock server's
// timeline through the clock that host measured against the server, and
// only overlaps the clocks prove count (see Check).
package crosshost

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// History is the history one client host wrote of a run against a
// deployment that several hosts share (lockbench --backend external
// --shared-keys), for Check: Name labels the host (its file).
type History struct {
	Name   string
	Header history.Header
	Ops    []history.Operation
}

// Clock is how a host's history was put on the server's timeline:
// server time = history time + OffsetNs, to within UncertaintyNs.
type Clock struct {
	// Name is the host's label (History.Name).
	Name string
	// OffsetNs is the measured offset before the run (ns).
	OffsetNs int64
	// UncertaintyNs bounds the error of the mapping over the whole run:
	// the larger half round trip of the two measurements, plus TIME's
	// microsecond resolution, plus the drift between them (ns).
	UncertaintyNs int64
	// DriftNs is how far the offset moved between the measurements
	// before and after the run (ns); 0 when there is none after.
	DriftNs int64
	// NoAfter is true when the history has no measurement after the run
	// (its drift is unknown and not counted).
	NoAfter bool
	// WallAheadNs is how far the host's wall clock ran ahead of the
	// server's (ns; negative: behind): its history's start as wall-clock
	// time (Header.Started) minus the server's time at history time 0
	// (OffsetNs), to within UncertaintyNs plus the microsecond of
	// Started's own reading. A merge of histories by wall clock
	// (Started plus their times) would misplace the host by this much;
	// Check does not use it. Valid only when WallKnown.
	WallAheadNs int64
	// WallKnown is false when the header's Started is missing or not RFC
	// 3339 (a history from another tool).
	WallKnown bool
	// InjectedSkewNs is the clock skew injected for testing
	// (Header.ClockSkewNs, lockbench run --clock-skew), in ns; 0: none.
	InjectedSkewNs int64
	// MaxStallNs is the largest delay the host's harness itself added
	// inside a hold (Header.MaxStallNs, from the end line), in ns.
	MaxStallNs int64
}

// Overlap is a proven overlap of two holds of one key by clients on
// different hosts: on the server's timeline, both holds' certain intervals
// (each shrunk by its host's uncertainty) share [FromNs, ToNs]. Times are
// ns since the earliest host's run start, on the server's clock.
type Overlap struct {
	// Key is the lock key both held.
	Key string
	// HostA and HostB name the hosts; ClientA, ClientB and HoldA, HoldB
	// the clients and hold ids in their own histories.
	HostA, HostB     string
	ClientA, ClientB int
	HoldA, HoldB     int64
	// FromNs and ToNs bound the proven overlap; OverlapLenNs = ToNs - FromNs.
	FromNs, ToNs int64
	OverlapLenNs int64
	// UncertaintyNs is the larger of the two hosts' uncertainties.
	UncertaintyNs int64
}

// Result is the cross-host exclusion check of several hosts'
// histories of one run (Check).
type Result struct {
	// Status is checker.OK (no overlap, on enough evidence),
	// checker.Violated (an overlap the clocks prove) or
	// checker.Inconclusive (Why says what
	// is missing).
	Status checker.Status
	// Message says what was found, in one line.
	Message string
	// Why names the missing evidence of an inconclusive result.
	Why string
	// Hosts are the hosts' clocks, in the order given.
	Hosts []Clock
	// Overlaps are the proven overlaps (at most witness.MaxWitnesses); Total counts all.
	Overlaps []Overlap
	Total    int
	// Undecided counts pairs of holds from different hosts whose order the
	// clocks cannot decide: they may overlap by less than the two hosts'
	// uncertainties together, or not at all. They are not violations.
	Undecided int
	// Chances counts pairs of holds of one key from different hosts that
	// followed one another within a TTL: the evidence that an overlap
	// would have been seen.
	Chances int
	// Stalled, when set, names the host whose harness stalled a client
	// inside a hold by more than TTL/2 with no fault to explain it (its
	// machine ran it late: Header.MaxStallNs): an overlap may then be
	// that machine's, not the lock's, as a run judges its own verdicts
	// (lockbench check treats an overlap where exclusion must hold as
	// inconclusive). "" when no host stalled so long.
	Stalled string
}

// MinChances is the fewest Chances for which Check calls an
// absence of overlaps ok rather than inconclusive.
const MinChances = 10

// Check checks mutual exclusion across the histories of several
// client hosts of one run. Each history must carry its clock measured
// against the lock server (Header.Clock, and Header.ClockAfter from its
// end line); every operation's time t of host h is put on the server's
// timeline as t + offset(h), and each hold (from its acquire's completion
// to its end of use, see measure.Holds) is taken as certain only on its interval
// shrunk by u(h) at both ends, where u(h) is the host's uncertainty
// (Clock). Two holds of one key from different hosts overlap
// provably only when their certain intervals intersect: so the check
// never reports an overlap the clocks cannot prove (sound). A pair whose
// possible intervals (widened by u) intersect but whose certain ones do
// not is undecided, counted, and not a violation. Overlaps within one
// host are left to that host's own check (lockbench check of its file).
//
// A host whose harness stalled a client inside a hold by more than TTL/2
// is named in Stalled (the result is not changed: whether that makes an
// overlap inconclusive depends on what the run expects).
//
// The result is inconclusive when the widest uncertainty, twice over, is
// at least TTL/2 (overlaps at the lock's own time scale could not be
// proven), or when fewer than MinChances cross-host pairs followed
// one another within a TTL. The histories must name one strategy,
// scenario and TTL; errors say which does not, or which has no clock.
func Check(hosts []History) (Result, error) {
	var res Result
	if len(hosts) < 2 {
		return res, fmt.Errorf("cross-host check: want the histories of at least two hosts, got %d", len(hosts))
	}
	h0 := hosts[0].Header
	type span struct {
		host             int
		client           int
		hold             int64
		certFrom, certTo int64 // server time
		possFrom, possTo int64
		uncertainty      int64
	}
	byKey := map[string][]span{}
	var maxU, stalled int64
	base := int64(0)
	for i, hh := range hosts {
		h := hh.Header
		if h.Strategy != h0.Strategy || h.Scenario != h0.Scenario || h.TTLMs != h0.TTLMs {
			return res, fmt.Errorf("cross-host check: %s is %s/%s at TTL %d ms, %s is %s/%s at TTL %d ms: give the histories of one run's hosts",
				hh.Name, h.Strategy, h.Scenario, h.TTLMs, hosts[0].Name, h0.Strategy, h0.Scenario, h0.TTLMs)
		}
		if h.Clock == nil && h.ClockError != "" {
			return res, fmt.Errorf("cross-host check: %s has no clock measurement: the run could not measure it (%s)", hh.Name, h.ClockError)
		}
		if h.Clock == nil {
			return res, fmt.Errorf("cross-host check: %s has no clock measurement (header field clock): only runs on --backend external against Redis measure their clock against the server; rerun them there", hh.Name)
		}
		c := Clock{Name: hh.Name, OffsetNs: h.Clock.OffsetNs, UncertaintyNs: h.Clock.HalfRTTNs + int64(time.Microsecond), InjectedSkewNs: h.ClockSkewNs,
			MaxStallNs: h.MaxStallNs}
		if ttl := h.TTLMs * int64(time.Millisecond); h.MaxStallNs > ttl/2 && (res.Stalled == "" || h.MaxStallNs > stalled) {
			stalled = h.MaxStallNs
			res.Stalled = fmt.Sprintf("on %s a client stalled %v (TTL %v) inside a hold with no fault to explain it: that machine ran the harness late, so an overlap may be the machine's, not the lock's; rerun on quieter machines, or with fewer --clients or a longer --ttl",
				hh.Name, time.Duration(h.MaxStallNs).Round(time.Millisecond), time.Duration(ttl))
		}
		if st, err := time.Parse(time.RFC3339Nano, h.Started); err == nil {
			c.WallAheadNs, c.WallKnown = st.UnixNano()-h.Clock.OffsetNs, true
		}
		if a := h.ClockAfter; a != nil {
			c.DriftNs = a.OffsetNs - h.Clock.OffsetNs
			c.UncertaintyNs = max(c.UncertaintyNs, a.HalfRTTNs+int64(time.Microsecond)) + abs64(c.DriftNs)
		} else {
			c.NoAfter = true
		}
		res.Hosts = append(res.Hosts, c)
		maxU = max(maxU, c.UncertaintyNs)
		if i == 0 || c.OffsetNs < base {
			base = c.OffsetNs
		}
	}
	for i, hh := range hosts {
		c := res.Hosts[i]
		off, u := c.OffsetNs-base, c.UncertaintyNs
		for _, hd := range measure.Holds(hh.Ops) {
			byKey[hd.Key] = append(byKey[hd.Key], span{host: i, client: hd.Client, hold: hd.Hold,
				certFrom: hd.AcquireComplete + off + u, certTo: hd.EndOfUse + off - u,
				possFrom: hd.AcquireComplete + off - u, possTo: hd.EndOfUse + off + u, uncertainty: u})
		}
	}
	ttl := h0.TTLMs * int64(time.Millisecond)
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ss := byKey[k]
		slices.SortFunc(ss, func(a, b span) int { return cmp.Or(cmp.Compare(a.possFrom, b.possFrom), cmp.Compare(a.host, b.host)) })
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				if b.possFrom > a.possTo+ttl {
					break // b and every later hold start more than a TTL after a ended
				}
				if a.host == b.host {
					continue
				}
				res.Chances++
				from, to := max(a.certFrom, b.certFrom), min(a.certTo, b.certTo)
				switch {
				case a.certFrom < a.certTo && b.certFrom < b.certTo && from < to:
					res.Total++
					if len(res.Overlaps) < witness.MaxWitnesses {
						res.Overlaps = append(res.Overlaps, Overlap{Key: k, HostA: hosts[a.host].Name, HostB: hosts[b.host].Name,
							ClientA: a.client, ClientB: b.client, HoldA: a.hold, HoldB: b.hold, FromNs: from, ToNs: to,
							UncertaintyNs: max(a.uncertainty, b.uncertainty), OverlapLenNs: to - from})
					}
				case max(a.possFrom, b.possFrom) < min(a.possTo, b.possTo):
					res.Undecided++
				}
			}
		}
	}
	widest := time.Duration(maxU)
	switch {
	case res.Total > 0:
		res.Status = checker.Violated
		o := res.Overlaps[0]
		res.Message = fmt.Sprintf("%d overlaps across hosts proven with clock uncertainty up to ±%v (first: key %s, %s client %d and %s client %d both held it for %v)",
			res.Total, widest, o.Key, o.HostA, o.ClientA, o.HostB, o.ClientB, time.Duration(o.OverlapLenNs))
	case 2*maxU >= ttl/2:
		res.Status = checker.Inconclusive
		res.Why = fmt.Sprintf("clock uncertainty ±%v is too wide against the TTL %v (twice it reaches TTL/2): an overlap shorter than the two hosts' uncertainties together cannot be proven; run the clients closer to the server (a shorter round trip) or with a longer --ttl", widest, time.Duration(ttl))
		res.Message = "inconclusive: " + res.Why
	case res.Chances < MinChances:
		res.Status = checker.Inconclusive
		res.Why = fmt.Sprintf("%d pairs of holds of one key from different hosts followed one another within a TTL (need ≥ %d): run longer (--duration) or with more clients on each host", res.Chances, MinChances)
		res.Message = "inconclusive: " + res.Why
	default:
		res.Status = checker.OK
		res.Message = fmt.Sprintf("no overlap across hosts in %d pairs of holds within a TTL of each other (clock uncertainty up to ±%v; %d pairs undecided)", res.Chances, widest, res.Undecided)
	}
	return res, nil
}

// abs64 is |x|.
func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
