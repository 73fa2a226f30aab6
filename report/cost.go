package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// peakText writes the peak of c, e.g. "2340 [2100, 2500] (n=6) at 64
// clients, 23% of linear", its share of linear scaling from the fewest
// clients measured (their grants/s per client × the peak's clients),
// with "BUSY: " in front when a run of the peak was measured on a busy
// machine; "—" without points.
func peakText(c figures.Capacity) string {
	if len(c.Points) == 0 {
		return "—"
	}
	p, first := c.Points[c.Peak], c.Points[0]
	s := fmt.Sprintf("%s at %s", p.GrantsPerS, plural(p.Clients, "client"))
	if c.Peak > 0 && first.GrantsPerS.Median > 0 && first.Clients > 0 {
		linear := first.GrantsPerS.Median / float64(first.Clients) * float64(p.Clients)
		s += fmt.Sprintf(", %s of linear", formatShare(p.GrantsPerS.Median/linear))
	}
	if p.Busy {
		s = "BUSY: " + s
	}
	return s
}

// kneeText writes the knee of c: "16 clients", or "not reached (rising at
// 256 clients)" when no point before the last reaches 90% of the peak;
// "—" without points.
func kneeText(c figures.Capacity) string {
	switch {
	case len(c.Points) == 0:
		return "—"
	case c.Knee < 0:
		return fmt.Sprintf("not reached (still rising at %s)", plural(c.Points[len(c.Points)-1].Clients, "client"))
	}
	return plural(c.Points[c.Knee].Clients, "client")
}

// curveText writes every point of c as "clients: median grants/s", e.g.
// "1: 190, 4: 760, 16: 2900", each marked BUSY where measured on a busy
// machine.
func curveText(c figures.Capacity) string {
	s := ""
	for i, p := range c.Points {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d: %s", p.Clients, formatNum(p.GrantsPerS.Median))
		if p.Busy {
			s += " (BUSY)"
		}
	}
	return s
}

// cmdsText writes the server and client commands per grant at the peak,
// e.g. "4.00 server, 2.00 client", "—" when neither is known.
func cmdsText(c figures.Capacity) string {
	if len(c.Points) == 0 {
		return "—"
	}
	p := c.Points[c.Peak]
	switch {
	case p.ServerCmdsPerGrant > 0 && p.ClientCmdsPerGrant > 0:
		return fmt.Sprintf("%s server, %s client", formatNum(p.ServerCmdsPerGrant), formatNum(p.ClientCmdsPerGrant))
	case p.ServerCmdsPerGrant > 0:
		return formatNum(p.ServerCmdsPerGrant) + " server"
	case p.ClientCmdsPerGrant > 0:
		return formatNum(p.ClientCmdsPerGrant) + " client (server: not reported)"
	}
	return "not reported"
}

// costRow is one strategy's row of the like-for-like cost table
// (costTable): each figure of its CostRow as text beside its bound.
type costRow struct {
	Strategy string
	// Timing is the critical section and think time of the runs behind
	// the row, e.g. "fixed(5ms), no think time".
	Timing string
	// RTTsPerHold and HoldP50Ms are the overhead per hold (granting call +
	// release) in its 1-client cost runs, in round trips (2: two PING-like calls) and in
	// ms; HoldBoundMs is its bound, two of the fastest round trips measured
	// in the same runs (CostRow.HoldBoundMs), e.g. "≥ 0.2".
	RTTsPerHold, HoldP50Ms, HoldBoundMs string
	// Cmds is the client and server commands per grant in the 1-client
	// cost runs, e.g. "2 client, 3 server".
	Cmds string
	// HandoffP50Ms and HandoffP99Ms are the handoff under contention (its
	// baseline runs); HandoffBoundMs one round trip measured in them.
	HandoffP50Ms, HandoffP99Ms, HandoffBoundMs string
	// Peak, PeakBound, Knee, PeakCmds and Curve describe its capacity
	// curve (Capacity.peakText; the bound CostRow.PeakBoundGrantsPerS as
	// "≤ N"; kneeText, cmdsText, curveText); "—" without one.
	Peak, PeakBound, Knee, PeakCmds, Curve string
}

// rttsText is an overhead in round trips per hold: the estimate, marked
// "timed:" when it is the calls' time over a measured round trip (etcd,
// ZooKeeper, adapters) rather than a count, which moves with the machine.
func rttsText(e stats.Estimate, counted bool) string {
	if e.N > 0 && !counted {
		return "timed: " + e.String()
	}
	return e.String()
}

// costTable returns the like-for-like cost table of f (CostTableOf) as
// text, its rows in the order of strategies (the chooser's), then any
// other strategy's: ms figures and grants/s are marked BUSY when a run was
// measured on a busy machine, round trips and commands are not. nil when
// no strategy has any.
func costTable(f *results.File, strategies []string) []costRow {
	rows := figures.CostTableOf(f)
	slices.SortStableFunc(rows, func(a, b results.CostRow) int {
		return cmp.Compare(rank(strategies, a.Strategy), rank(strategies, b.Strategy))
	})
	caps := figures.CapacityOf(f.Cost)
	var out []costRow
	for _, r := range rows {
		if r.RTTsPerHold.N+r.HoldP50Ms.N+r.HandoffP50Ms.N == 0 && r.ClientCmdsPerGrant == 0 && r.ServerCmdsPerGrant == 0 &&
			!slices.ContainsFunc(caps, func(c figures.Capacity) bool { return c.Strategy == r.Strategy && len(c.Points) > 0 }) {
			continue // nothing measured (a run without cost cells or contention): no row of dashes
		}
		busy := func(b bool, e stats.Estimate) string {
			if b && e.N > 0 {
				return "BUSY: " + e.String()
			}
			return e.String()
		}
		row := costRow{Strategy: r.Strategy,
			Timing:         timingText(r.CS, r.ThinkMs),
			RTTsPerHold:    rttsText(r.RTTsPerHold, r.RTTsCounted),
			HoldP50Ms:      busy(r.OverheadBusy, r.HoldP50Ms),
			HoldBoundMs:    boundText(r.HoldBoundMs, "≥ "),
			Cmds:           cmdsPair(r.ClientCmdsPerGrant, r.ServerCmdsPerGrant),
			HandoffP50Ms:   busy(r.HandoffBusy, r.HandoffP50Ms),
			HandoffP99Ms:   busy(r.HandoffBusy, r.HandoffP99Ms),
			HandoffBoundMs: boundText(r.HandoffBoundMs, "≥ "),
			Peak:           "—", PeakBound: boundText(r.PeakBoundGrantsPerS, "≤ "), Knee: "—", PeakCmds: "—", Curve: "—",
		}
		for _, c := range caps {
			if c.Strategy == r.Strategy && len(c.Points) > 0 {
				row.Peak, row.Knee, row.PeakCmds, row.Curve = peakText(c), kneeText(c), cmdsText(c), curveText(c)
			}
		}
		out = append(out, row)
	}
	return out
}

// rank is the position of s in order, len(order) when absent.
func rank(order []string, s string) int {
	if i := slices.Index(order, s); i >= 0 {
		return i
	}
	return len(order)
}

// timingText writes a critical section and think time, e.g. "fixed(5ms),
// no think time"; "—" when unknown.
func timingText(cs string, thinkMs float64) string {
	switch {
	case cs == "":
		return "—"
	case thinkMs == 0:
		return cs + ", no think time"
	}
	return cs + ", think " + formatNum(thinkMs) + " ms"
}

// cmdsPair writes client and server commands per grant, e.g. "2 client,
// 3 server"; "not reported" when neither is known.
func cmdsPair(client, server float64) string {
	var parts []string
	if client > 0 {
		parts = append(parts, formatNum(client)+" client")
	}
	if server > 0 {
		parts = append(parts, formatNum(server)+" server")
	}
	if len(parts) == 0 {
		return "not reported"
	}
	return strings.Join(parts, ", ")
}

// boundText writes a bound v after prefix, e.g. "≥ 0.2"; "—" when v is 0
// (not measured).
func boundText(v float64, prefix string) string {
	if v <= 0 {
		return "—"
	}
	return prefix + formatNum(v)
}
