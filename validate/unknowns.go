package validate

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// The hints on unknown outcomes (info) name the cause the recorded
// operations show, by each call's duration against its budget (the op
// timeout, the deadline of the call's context): a call that came back
// well inside the budget is the lock's own answer (its error names why),
// one that took the budget was cut off by it (more time may help), one
// that came back past it overran its deadline (the lock's fault). Only the
// second kind is sent to --op-timeout.
const (
	// wellInside: an unknown outcome answered in less than this share of
	// the budget is the lock's own answer. Why a half: a call cut off by
	// its deadline returns at the deadline (plus scheduling delay), one the
	// lock answered itself returns when it answered; measured, a refused
	// connection comes back in 1-3 ms and redsync's own timeout at
	// 0.05×TTL, both far below half of 500 ms, while deadline-bound calls
	// come back within a few ms of it.
	wellInside = 0.5
	// overrunSlack: a call that returned later than its deadline by more
	// than max(budget×overrunSlack, minOverrun) overran it; less is the
	// scheduling delay of a call cut off at its deadline on a busy machine
	// (measured here: up to tens of ms with 5-40% steal).
	overrunSlack = 0.25
	minOverrun   = 50 * time.Millisecond
)

// fixOwnBudget is the fix for unknown outcomes that timed out inside the
// lock, well inside the call budget: the strategy's own per-call timeout
// (redsync: 0.05×TTL; Redlock's per-node timeout: TTL/10) ran out.
const fixOwnBudget = "a longer --ttl (the strategy's own call timeout follows it; a longer --op-timeout would not change it), or fewer --clients"

// Unknowns summarises the unknown outcomes (info) of a run's outermost
// whole-lock acquires by the clients against their budget: how many the
// lock answered itself well inside it (with a timeout of its own, or
// another error, most often TopError), how many took it, and how many
// returned past it, by how much. The zero value (no budget recorded: a
// history from before op_timeout_ms) classifies nothing.
type Unknowns struct {
	// Budget is each call's budget (the op timeout); 0: not recorded.
	Budget time.Duration
	// Calls counts the unknown outcomes summarised.
	Calls int
	// OwnTimeouts and OwnErrors split the calls answered in less than
	// wellInside×Budget: a timeout inside the lock (measure.IsTimeout of
	// the error), or another error of its own. OwnMedian is their median
	// duration.
	OwnTimeouts, OwnErrors int
	OwnMedian              time.Duration
	// TopError is the most frequent error text of the calls the lock
	// answered itself with another error than a timeout, and
	// TopErrorCount how many had it.
	TopError      string
	TopErrorCount int
	// TookBudget counts the calls that came back at their deadline (from
	// wellInside×Budget up to the overrun slack past it).
	TookBudget int
	// Overran counts the calls that came back past their deadline by more
	// than the slack; MaxOverrun and MedianOverrun are by how much.
	Overran                   int
	MaxOverrun, MedianOverrun time.Duration
}

// UnknownsOf summarises the unknown outcomes among ops (outermost
// whole-lock acquires of the clients; others are left out) against
// budget; 0 budget: the zero Unknowns but Calls.
func UnknownsOf(ops []history.Operation, budget time.Duration) Unknowns {
	u := Unknowns{Budget: budget}
	var own, over []time.Duration
	errs := map[string]int{}
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Client < 0 || op.Depth > 1 || op.Node != "" || op.Result != history.Info {
			continue
		}
		u.Calls++
		if budget <= 0 {
			continue
		}
		d := time.Duration(op.Complete - op.Invoke)
		switch slack := max(time.Duration(overrunSlack*float64(budget)), minOverrun); {
		case d < time.Duration(wellInside*float64(budget)):
			own = append(own, d)
			if measure.IsTimeout(op.Error) {
				u.OwnTimeouts++
			} else {
				u.OwnErrors++
				errs[op.Error]++
			}
		case d > budget+slack:
			u.Overran++
			over = append(over, d-budget)
		default:
			u.TookBudget++
		}
	}
	u.OwnMedian = median(own)
	if len(over) > 0 {
		u.MaxOverrun, u.MedianOverrun = slices.Max(over), median(over)
	}
	for e, n := range errs {
		if n > u.TopErrorCount || n == u.TopErrorCount && e < u.TopError {
			u.TopError, u.TopErrorCount = e, n
		}
	}
	return u
}

// median is the median of ds (the upper one of an even count), 0 when
// empty.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// cause is one group of unknown outcomes: how many, in words, and the fix
// that would help ("" when no flag can: the lock's own answers).
type cause struct {
	n         int
	text, fix string
}

// causes are the groups of u with calls, in the order own timeouts, own
// errors, budget, overruns; noun names the calls ("acquire").
func (u Unknowns) causes(noun string) []cause {
	budget := shortDur(u.Budget)
	var out []cause
	if u.OwnTimeouts > 0 {
		out = append(out, cause{u.OwnTimeouts, fmt.Sprintf("%s timed out inside the lock after a median of %s, well inside the %s call budget (the strategy's own timeout)",
			countOf(u.OwnTimeouts, noun), shortDur(u.OwnMedian), budget), fixOwnBudget})
	}
	if u.OwnErrors > 0 {
		out = append(out, cause{u.OwnErrors, fmt.Sprintf("%s answered unknown by the lock itself after a median of %s, well inside the %s call budget: its own answers%s",
			countOf(u.OwnErrors, noun), shortDur(u.OwnMedian), budget, u.topError()), ""})
	}
	if u.TookBudget > 0 {
		out = append(out, cause{u.TookBudget, fmt.Sprintf("%s took the whole %s call budget", countOf(u.TookBudget, noun), budget), fixTimeouts})
	}
	if u.Overran > 0 {
		out = append(out, cause{u.Overran, fmt.Sprintf("%s returned past the %s deadline, by up to %s (median %s): the lock overran its deadline (it must answer unknown by then; more time would not help)",
			countOf(u.Overran, noun), budget, shortDur(u.MaxOverrun), shortDur(u.MedianOverrun)), ""})
	}
	return out
}

// topError is ", most often “TEXT” (n)" for the lock's own
// answers, "" without one; the text is cut at 120 bytes.
func (u Unknowns) topError() string {
	if u.TopErrorCount == 0 {
		return ""
	}
	e := strings.Join(strings.Fields(u.TopError), " ") // one line
	if e == "" {
		return fmt.Sprintf(", %d with no error text", u.TopErrorCount)
	}
	if len(e) > 120 {
		e = e[:117] + "..."
	}
	return fmt.Sprintf(", most often “%s” (%d)", e, u.TopErrorCount)
}

// Explain says why the unknown outcomes came, from the recorded
// durations, and the fix of the largest group: ": 700 took the whole
// 500ms call budget; 12 returned past ..." with fixTimeouts, or the lock's
// own answers with no fix (""), or its own timeouts with fixOwnBudget. ok
// is false when u classifies nothing (no budget recorded): the caller
// keeps its general hint.
func (u Unknowns) Explain(noun string) (text, fix string, ok bool) {
	cs := u.causes(noun)
	if len(cs) == 0 {
		return "", "", false
	}
	main := cs[0]
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.text
		if c.n > main.n {
			main = c
		}
	}
	return strings.Join(parts, "; "), main.fix, true
}

// shortDur writes d rounded for a sentence: to the ms from 10 ms up, to
// 0.1 ms below.
func shortDur(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Microsecond).String()
}
