package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
)

// Expect is what a check must show in one (strategy, scenario) pair.
type Expect string

// Expectations per check.
const (
	// Hold: the check must pass; a violation (or an inconclusive check) fails the run: the CI gate.
	Hold Expect = "hold"
	// Break: a canary: the check must find a violation; not finding it means
	// the harness lost its teeth, which also fails the run.
	Break Expect = "break"
	// AtRisk: reported, never gated (the outcome depends on timing the
	// scenario does not control).
	AtRisk Expect = "at-risk"
)

// Expectation is the expected verdict of one (strategy, scenario) pair,
// per check, with the reasoning in one line.
type Expectation struct {
	Exclusion Expect
	Resource  Expect
	Liveness  Expect
	// Fencing is what the fencing-token check must show; "" (the default)
	// means it must hold for every strategy that issues fencing tokens (a
	// strategy promise). Set it to Break where a fault loses the counter
	// itself (e.g. a failover to a replica that never saw its INCR).
	Fencing Expect
	Reason  string
	// DuringFaults is what availability the pair must show while a fault
	// window is open: "" (not judged), "grants" (it must keep granting:
	// at least one grant invoked and completed inside a fault window) or
	// "no-grants" (it must grant nothing inside a fault window).
	DuringFaults string
}

// Summary is the pair's one-word expectation: "must-break" if any check
// must break, "must-hold" if every check must hold, else "at-risk".
func (e Expectation) Summary() string {
	all := []Expect{e.Exclusion, e.Resource, e.Liveness}
	for _, x := range append(all, e.Fencing) {
		if x == Break {
			return "must-break"
		}
	}
	for _, x := range all {
		if x != Hold {
			return "at-risk"
		}
	}
	return "must-hold"
}

// Checks returns the expectation per check name, as in results.json
// ("fencing" only when Fencing is set).
func (e Expectation) Checks() map[string]string {
	m := map[string]string{"exclusion": string(e.Exclusion), "resource": string(e.Resource), "liveness": string(e.Liveness)}
	if e.Fencing != "" {
		m["fencing"] = string(e.Fencing)
	}
	return m
}

func safe(reason string) Expectation {
	return Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, Reason: reason}
}
func broken(reason string) Expectation {
	return Expectation{Exclusion: Break, Resource: Break, Liveness: Hold, Reason: reason}
}
func fencedOnly(reason string) Expectation {
	return Expectation{Exclusion: Break, Resource: Hold, Liveness: Hold, Reason: reason}
}

// verdictTable is the verdict matrix: scenario → strategy → expectation,
// merged from one function per scenario family. A pair missing from it is at
// risk ("no expectation recorded"); a pair whose scenario does not apply to
// the strategy is left out.
func verdictTable() map[string]map[string]Expectation {
	all := map[string]map[string]Expectation{}
	for _, part := range []map[string]map[string]Expectation{clientVerdicts(), processVerdicts(), failoverVerdicts(), networkVerdicts()} {
		for sc, m := range part {
			all[sc] = m
		}
	}
	return all
}

// clientVerdicts covers the baseline and the client-side scenarios.
func clientVerdicts() map[string]map[string]Expectation {
	return map[string]map[string]Expectation{
		"baseline": {
			"naive":     safe("critical sections are far shorter than the TTL and nobody crashes: every strategy must be exclusive"),
			"set-nx-px": safe("critical sections are far shorter than the TTL: the unchecked DEL never meets another owner's key"),
			"token-lua": safe("no fault: SET NX PX grants one owner at a time"),
			"watchdog":  safe("no fault: SET NX PX grants one owner at a time"),
			"reentrant": safe("no fault: the hash lock grants one owner at a time, nesting counted"),
			"redlock":   safe("no fault: a quorum of 5 grants one owner at a time"),
			"fenced":    safe("no fault: SET NX PX grants one owner at a time"),
			"redsync":   safe("no fault: a quorum of 5 grants one owner at a time"),
			"redislock": safe("no fault: SET NX PX grants one owner at a time"),

			"redsync-single": safe("no fault: SET NX PX grants one owner at a time"),
		},
		"long-cs": {
			"naive":     broken("the key expires mid-CS; the next owner enters while the slow one still writes (and its DEL frees another's lock)"),
			"set-nx-px": broken("the key expires mid-CS; the next owner enters; the slow owner's DEL deletes the new owner's lock"),
			"token-lua": broken("the key expires mid-CS and nothing renews or checks it: the slow owner writes over the next one"),
			"watchdog":  safe("renewal every TTL/3 keeps the key alive through a 2×TTL critical section"),
			"reentrant": broken("no renewal: the hash key expires mid-CS and the next owner enters"),
			"redlock":   safe("the client checks its validity time before writing and gives up the stale write (redis.io distlock)"),
			"fenced":    fencedOnly("exclusion breaks when the key expires mid-CS, but the resource rejects the slow owner's older fencing token"),
			"redsync":   safe("the client checks mutex.Until() before writing and gives up the stale write"),
			"redislock": safe("the refresh loop (Lock.Refresh every TTL/3, as the library's README refreshes before the TTL runs out) keeps the key alive through a 2×TTL critical section, as watchdog; with --redislock-refresh off it breaks as token-lua"),

			"redsync-single": safe("the client checks mutex.Until() before writing and gives up the stale write, as redlock does"),
		},
		"gc-pause": {
			"naive":     broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake"),
			"set-nx-px": broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake"),
			"token-lua": broken("a pause past the TTL after the check: the key expires, another owner enters, the paused one writes on wake"),
			"watchdog":  broken("the pause stops the watchdog too (Kleppmann 2016): the key expires and the paused owner writes on wake"),
			"reentrant": broken("a pause past the TTL: the hash key expires, another owner enters, the paused one writes on wake"),
			"redlock":   broken("the validity check passed before the pause; no timing check can cover a pause after it (Kleppmann 2016)"),
			"fenced":    fencedOnly("exclusion breaks under the pause, but the resource rejects the woken owner's older fencing token (Kleppmann 2016)"),
			"redsync":   broken("the validity check passed before the pause; no timing check can cover a pause after it (Kleppmann 2016)"),
			"redislock": broken("the pause stops the refresh loop too (Kleppmann 2016): the key expires and the paused owner writes on wake"),

			"redsync-single": broken("the validity check passed before the pause; no timing check can cover a pause after it (Kleppmann 2016)"),
		},
		"crash-between": {
			"naive":     {Exclusion: Hold, Resource: Hold, Liveness: Break, Reason: "the client dies after SETNX and before EXPIRE: the key never expires, a deadlock"},
			"set-nx-px": safe("the holder dies inside its CS; SET NX PX set the TTL atomically, so the key expires and others go on"),
			"token-lua": safe("the holder dies inside its CS; the key expires after the TTL"),
			"watchdog":  safe("the holder dies with its watchdog; the key expires after the TTL"),
			"reentrant": safe("the holder dies inside its CS; the hash key expires after the TTL"),
			"redlock":   safe("the holder dies inside its CS; the keys expire after the TTL on every node"),
			"fenced":    safe("the holder dies inside its CS; the key expires after the TTL"),
			"redsync":   safe("the holder dies inside its CS; the keys expire after the TTL on every node"),
			"redislock": safe("the holder dies inside its CS with its refresh loop; the key expires after the TTL"),

			"redsync-single": safe("the holder dies inside its CS; the key expires after the TTL"),
		},
	}
}

// Expected returns the expectation of a (strategy, scenario) pair; a pair
// the table does not name is at risk.
func Expected(strategy, scenario string) Expectation {
	if e, ok := verdictTable()[scenario][strategy]; ok {
		return e
	}
	return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Reason: fmt.Sprintf("no expectation recorded for %s under %s", strategy, scenario)}
}

// Pair is one row of the verdict matrix.
type Pair struct {
	Strategy, Scenario string
	Expectation
}

// Matrix returns every pair of the verdict table, in report order
// (scenarios as chaos.All lists them, then strategies as impl.All does), for
// the README and reports.
func Matrix() []Pair {
	rank := func(names []string) map[string]int {
		m := map[string]int{}
		for i, n := range names {
			m[n] = i
		}
		return m
	}
	sc, st := rank(chaos.Names()), rank(impl.Names())
	var out []Pair
	for scn, m := range verdictTable() {
		for stn, e := range m {
			out = append(out, Pair{stn, scn, e})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scenario != out[j].Scenario {
			return sc[out[i].Scenario] < sc[out[j].Scenario]
		}
		return st[out[i].Strategy] < st[out[j].Strategy]
	})
	return out
}

// NotApplicable returns the (strategy, scenario) pairs whose scenario does
// not apply to the strategy (e.g. Redlock-only faults for a single-node
// lock), with the reason, in report order. They never run.
func NotApplicable() []Pair {
	var out []Pair
	for _, sc := range chaos.All() {
		for _, st := range impl.All() {
			if ok, why := sc.AppliesTo(st.Info()); !ok {
				out = append(out, Pair{Strategy: st.Name(), Scenario: sc.Name, Expectation: Expectation{Reason: "not applicable: " + why}})
			}
		}
	}
	return out
}

// MatrixMarkdown renders the verdict matrix as a Markdown table, one row per
// pair (the README embeds it; a test keeps the two in sync). The "during
// faults" column is the availability the pair must show while a fault is
// on; "fencing" is blank where the default applies (tokens must increase
// for strategies that issue them).
func MatrixMarkdown() string {
	var b strings.Builder
	b.WriteString("| scenario | strategy | expected | exclusion | resource | liveness | fencing | during faults | why |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range Matrix() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Scenario, p.Strategy, p.Summary(),
			p.Exclusion, p.Resource, p.Liveness, p.Fencing, p.DuringFaults, p.Reason)
	}
	for _, na := range NotApplicable() {
		fmt.Fprintf(&b, "| %s | %s | n/a | | | | | | %s |\n", na.Scenario, na.Strategy, na.Reason)
	}
	return b.String()
}
