package validate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
)

// The evidence rules: the absence of a violation is a pass only when the
// run gave the check a chance to find one. Below these minimums (above the
// maximum) a check that found no violation is inconclusive, with the
// missing evidence named and the flag that would supply it. A violation
// found on little evidence is still a violation: its witness is evidence.
const (
	// MinHolds is the fewest holds (successful outermost acquires) on
	// which the absence of an exclusion, resource or fencing violation
	// counts. Why 10: in the ci profile a lock that works grants 50-160
	// times in its 1 s runs (16 clients on one key; 10-40 in the 2-client
	// quorum scenarios), and a canary's fault strikes 1-3 of them, so
	// fewer than 10 holds means the strategy barely granted (the issue's
	// redsync at TTL 50 ms: 2-4) and was not exercised, while every run
	// that was exercised clears it.
	MinHolds = 10
	// MinChancesToOverlap is the fewest holds that met another client's
	// attempt on the same key (measure.Evidence.ChancesToOverlap) on which
	// the absence of an exclusion or resource violation counts, for a
	// must-hold pair and a must-break canary alike: a hold nobody else
	// tried during could not have overlapped another. Why 10: the same
	// count as MinHolds, since with contention (the verdict table's
	// scenarios) nearly every hold meets another client (measured in ci:
	// chances/holds 0.7-1.0), so a run short of it is a run short of holds
	// or of contention (many --keys, few --clients).
	MinChancesToOverlap = 10
	// MinFaultsLanded is the fewest faults that must have landed in a
	// scenario with faults before a canary's (a check expected to break)
	// not breaking counts: a nemesis says a fault landed
	// (history.Landed) when it struck a held lock and the condition the
	// scenario needs for a violation came (e.g. another client was
	// granted the key during the pause), so a canary with no landed fault
	// had nothing to break. A check expected to hold needs none: there a
	// missed fault is the lock doing its job (a renewing lock grants
	// nobody during a long critical section), but it needs a fault
	// injected at all (a scenario whose trigger never came tested
	// nothing). A fault whose nemesis cannot tell (Landing "":
	// measure.Evidence.FaultsUnknown) counts as landed: only a nemesis
	// that says "missed" takes the evidence away. Why 1: one struck hold
	// is what a canary needs to break (its witness).
	MinFaultsLanded = 1
	// MaxUnknownShare is the largest share (0..1) of outermost acquires
	// with an unknown outcome (info: timed out or failed) at which the
	// absence of a violation counts. Why 0.5: above it most attempts never
	// learned whether they were granted, so most "chances to overlap"
	// were attempts that did not test the lock, and a pass rests on a
	// minority of the run (the redsync at TTL 50 ms: 714 of 719
	// acquires unknown).
	MaxUnknownShare = 0.5
	// MinObservedShare is the smallest share (0..1) of the failed
	// outermost acquires that the server-state observer must have
	// followed with a read of their key within TTL/2
	// (measure.Evidence.FailedAcquiresObserved) for the absence of an
	// orphan to count: an orphan lives about a TTL, so a read within
	// TTL/2 would have found it. Why 0.5: the observer reads a key at
	// most TTL/10 after a failed acquire asks, so in the ci profile it
	// followed 86-100% of them on a busy machine (a node that does not
	// answer, paused or restarting, takes the rest); below half, most
	// failed acquires went unwatched (a machine too busy for the
	// observer, or servers that hardly answered) and a pass would rest on
	// a minority. The reasons check asks the same share of the failed
	// releases and extends that state expired or taken to come after an
	// answered read of their key.
	MinObservedShare = 0.5
)

// Fixes named by the evidence rules: the flags that supply what is missing.
const (
	fixLonger    = "run longer (--duration) or with more clients (--clients)"
	fixContend   = "contend more: more clients per key (more --clients or fewer --keys)"
	fixTimeouts  = "give the calls more time: a longer --ttl (a strategy's call budget follows it) or --op-timeout, or fewer --clients"
	fixSeed      = "rerun with another --seed"
	fixTrigger   = "run longer (--duration): the scenario's faults strike a held lock, and none came"
	fixCheckTime = "give porcupine more time: a longer --check-timeout (lockbench check: --timeout)"
	fixContended = "more --keys or fewer --clients"
	fixSplit     = "fewer --clients per key (more --keys), so that one client wins a quorum"
	fixStall     = "rerun on a quieter machine, or with fewer --clients or a longer --ttl"
)

// faulted reports whether a run of scenario injects faults: the scenario
// says so (its kind is not chaos.None), or, for a scenario this lockbench
// does not know (a history from elsewhere), the history holds a fault.
func faulted(scenario string, ev measure.Evidence) bool {
	if sc, err := chaos.Lookup(scenario); err == nil {
		return sc.Kind != chaos.None
	}
	return ev.Faults > 0
}

// Finding is a liveness finding: the strategy granted (almost) nothing.
type Finding struct {
	// Text says how little it granted and why, e.g. "granted 0 times to
	// 256 clients in 188 acquires: 188 acquires timed out (100%);
	// per-node: 940 of 940 timed out"; "" when there is no finding.
	Text string
	// Fix names the flags that would let it grant, from the main cause;
	// "" when no flag can (the lock's own answers, or overruns of its
	// deadline).
	Fix string
}

// LivenessFinding reports whether a strategy granted (almost) nothing in
// a run with clients clients, and why, from the history's evidence and
// its unknown outcomes against their budget (u, UnknownsOf: the lock's own
// answers, the budget, or overruns of it; with no budget recorded, by
// their error text: timed out or not).
// "Almost nothing" is fewer grants than clients (not every client could
// have held the lock once) while the attempts it did not grant mostly got
// no answer (unknown outcomes and split votes outnumber refusals by a
// holder), or no grant at all. Contention alone is not a finding: 256
// clients on one key with 5 ms critical sections get at most 200 grants a
// second from a lock that works, fewer than clients. Nor is a share of
// attempts: the retry policy sets how many attempts a client makes
// (--retry spin retries at once). A deadlock (liveness violated) is its
// own finding: pass deadlocked true and there is none.
func LivenessFinding(clients int, ev measure.Evidence, u Unknowns, deadlocked bool) Finding {
	grants, fail, info := ev.Acquires.OK, ev.Acquires.Fail, ev.Acquires.Info
	noAnswer, total := info+ev.SplitVotes, ev.Acquires.Total()
	switch {
	case deadlocked, total == 0: // no attempt at all: nothing to say why
		return Finding{}
	case grants >= max(clients, 1), grants > 0 && noAnswer <= fail:
		return Finding{}
	}
	times := fmt.Sprintf("%d times", grants)
	if grants == 1 {
		times = "once"
	}
	var causes []string
	var main cause
	add := func(n int, text, fix string) {
		if n == 0 {
			return
		}
		causes = append(causes, text)
		if n > main.n {
			main = cause{n: n, fix: fix, text: text}
		}
	}
	if cs := u.causes("acquire"); len(cs) > 0 {
		for _, c := range cs {
			add(c.n, c.text, c.fix)
		}
	} else {
		add(ev.AcquireTimeouts, fmt.Sprintf("%s timed out (%s)", countOf(ev.AcquireTimeouts, "acquire"), pct(ev.AcquireTimeouts, total)), fixTimeouts)
		add(info-ev.AcquireTimeouts, fmt.Sprintf("%s unknown for another reason (e.g. a refused connection)", countOf(info-ev.AcquireTimeouts, "acquire")), fixTimeouts)
	}
	add(ev.SplitVotes, fmt.Sprintf("%s (some nodes but fewer than a quorum of %d said yes)", countOf(ev.SplitVotes, "split vote"), ev.Nodes/2+1), fixSplit)
	add(fail, fmt.Sprintf("%s refused as held by another client (contention)", countOf(fail, "acquire")), fixContended)
	text := fmt.Sprintf("granted %s to %s in %s", times, countOf(clients, "client"), countOf(total, "acquire"))
	if len(causes) > 0 {
		text += ": " + strings.Join(causes, ", ")
	}
	if n := ev.NodeAcquires.Total(); n > 0 {
		text += fmt.Sprintf("; per-node: %d of %d timed out", ev.NodeTimeouts, n)
	}
	if main.n == 0 {
		main.fix = fixLonger
	}
	return Finding{Text: text, Fix: main.fix}
}

// Missing applies the evidence rules to a checker report of a run of
// scenario judged against exp: it returns, per check ("exclusion",
// "resource", "fencing", "liveness" and the contract checks), the evidence a check that found no violation
// lacked, and leaves out the checks that have enough, were violated, or
// do not apply (skipped for a reason other than no holds). The rules are
// the same whatever the expectation, but for MinFaultsLanded, which only
// a check expected to break needs. finding is the run's LivenessFinding:
// its fix is named when too few holds are what is missing. A porcupine
// timeout (checker.Result.TimedOut) is missing evidence too: more time
// decides it. u (UnknownsOf) explains a share of unknown outcomes above
// MaxUnknownShare by the calls' durations against their budget, and names
// the fix of its largest group: more time only when the calls took it.
func Missing(scenario string, rep checker.Report, exp verdicts.Expectation, finding Finding, u Unknowns) map[string]results.MissingEvidence {
	ev := rep.Evidence
	out := map[string]results.MissingEvidence{}
	fencing := exp.Fencing
	if fencing == "" {
		fencing = verdicts.Hold
	}
	for _, c := range []struct {
		name    string
		r       checker.Result
		overlap bool // the check needs two holders to find anything
		e       verdicts.Expect
	}{{"exclusion", rep.Exclusion, true, exp.Exclusion}, {"resource", rep.Resource, true, exp.Resource}, {"fencing", rep.Fencing, false, fencing}} {
		switch {
		case c.r.Status == checker.Violated:
			continue
		case c.r.Status == checker.Inconclusive && c.r.TimedOut:
			out[c.name] = results.MissingEvidence{What: c.r.Message, Fix: fixCheckTime}
			continue
		case c.r.Status == checker.Inconclusive:
			continue // a checker bug or a bad header: judged as unexpected
		case c.r.Status == checker.Skipped && (!c.overlap || ev.Holds > 0):
			continue // the check does not apply (no fencing tokens, no resource)
		}
		if m, ok := missingFor(scenario, ev, c.overlap, c.e == verdicts.Break, finding, u); ok {
			out[c.name] = m
		}
	}
	if rep.Orphans.Status == checker.OK {
		if m, ok := orphansMissing(ev); ok {
			out["orphans"] = m
		}
	}
	if rep.Reasons.Status == checker.OK {
		if m, ok := reasonsMissing(ev); ok {
			out["reasons"] = m
		}
	}
	if rep.Liveness.Status == checker.Inconclusive && !rep.Liveness.TimedOut {
		// The post-run probe got no answer: the liveness check has no
		// evidence either way.
		out["liveness"] = results.MissingEvidence{What: rep.Liveness.Message, Fix: fixTimeouts}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// RerunHelps reports whether running an inconclusive run again with
// another seed and a longer duration (as a bench does) can supply the
// evidence it lacked: more holds, chances to overlap and fault injections
// come with a longer run, a fault that lands with another seed. It cannot
// when most acquire outcomes were unknown (more than MaxUnknownShare:
// that share is a rate, which a longer run keeps; the fix is a longer TTL
// or fewer clients, which change the pair) or when porcupine ran out of
// time (a longer run makes that worse); false also for a run with nothing
// missing.
func RerunHelps(r results.Run) bool {
	if len(r.Missing) == 0 || r.Evidence.UnknownShare() > MaxUnknownShare {
		return false
	}
	for _, m := range r.Missing {
		if m.Fix != fixCheckTime {
			return true
		}
	}
	return false
}

// missingFor is the evidence one check lacks, if any: holds (and chances
// to overlap when overlap is set), the unknown share, and in a scenario
// with faults a fault injected (and, for a canary, one that landed).
func missingFor(scenario string, ev measure.Evidence, overlap, canary bool, finding Finding, u Unknowns) (results.MissingEvidence, bool) {
	var what, fix []string
	addFix := func(f string) {
		if f != "" && !slices.Contains(fix, f) {
			fix = append(fix, f)
		}
	}
	switch short := ev.Holds < MinHolds; {
	case overlap && (short || ev.ChancesToOverlap < MinChancesToOverlap):
		what = append(what, fmt.Sprintf("%s, %s (need ≥ %d)", countOf(ev.Holds, "hold"), chancesOf(ev.ChancesToOverlap), MinChancesToOverlap))
		switch {
		case short && finding.Text != "":
			addFix(finding.Fix)
		case short:
			addFix(fixLonger)
		default:
			addFix(fixContend)
		}
	case !overlap && short:
		what = append(what, fmt.Sprintf("%s (need ≥ %d)", countOf(ev.Holds, "hold"), MinHolds))
		if finding.Text != "" {
			addFix(finding.Fix)
		} else {
			addFix(fixLonger)
		}
	}
	if ev.UnknownShare() > MaxUnknownShare {
		w := fmt.Sprintf("%d of %d acquires unknown (%s; at most %.0f%%)", ev.Acquires.Info, ev.Acquires.Total(), pct(ev.Acquires.Info, ev.Acquires.Total()), 100*MaxUnknownShare)
		if text, f, ok := u.Explain("acquire"); ok {
			w += ", of which " + text
			addFix(f)
		} else {
			addFix(fixTimeouts)
		}
		what = append(what, w)
	}
	if faulted(scenario, ev) {
		switch landed := ev.FaultsLanded + ev.FaultsUnknown(); {
		case ev.Faults == 0:
			what = append(what, "no fault injected")
			addFix(fixTrigger)
		case canary && landed < MinFaultsLanded:
			what = append(what, fmt.Sprintf("no fault landed (%d injected, %d missed)", ev.Faults, ev.FaultsMissed))
			addFix(fixSeed)
		}
	}
	if len(what) == 0 {
		return results.MissingEvidence{}, false
	}
	return results.MissingEvidence{What: strings.Join(what, "; "), Fix: strings.Join(fix, "; ")}, true
}

// fixTokens is the fix when the lock's tokens are not the values it stores.
const fixTokens = "make the lock report, as its token, the value it stores in the key (an adapter: the token field of its replies)"

// fixObserve is the fix when the observer followed too few failed acquires.
const fixObserve = "rerun on a quieter machine, or with a longer --ttl (the observer reads a key at most every TTL/10) or fewer --clients"

// tokensMissing is the evidence every check that matches tokens read on
// the servers lacks when none of them is one the lock reported.
func tokensMissing(ev measure.Evidence) (results.MissingEvidence, bool) {
	if ev.ObservedTokens == 0 || ev.ObservedKnownTokens > 0 {
		return results.MissingEvidence{}, false
	}
	return results.MissingEvidence{What: fmt.Sprintf("none of the %d tokens read on the servers is one the lock returned or stated it tried: its tokens are not the values it stores", ev.ObservedTokens), Fix: fixTokens}, true
}

// orphansMissing is the evidence the orphan check lacks, if any: tokens
// it can match, and reads after at least MinObservedShare of the failed
// acquires.
func orphansMissing(ev measure.Evidence) (results.MissingEvidence, bool) {
	if m, ok := tokensMissing(ev); ok {
		return m, true
	}
	if f := ev.Acquires.Fail; f > 0 && float64(ev.FailedAcquiresObserved) < MinObservedShare*float64(f) {
		return results.MissingEvidence{What: fmt.Sprintf("only %d of %d failed acquires were followed within TTL/2 by a read of their key that a majority of the nodes answered (need ≥ %.0f%%)", ev.FailedAcquiresObserved, f, 100*MinObservedShare), Fix: fixObserve}, true
	}
	return results.MissingEvidence{}, false
}

// reasonsMissing is what the reasons check lacks: an answered read of
// the key before at least MinObservedShare of the failed releases and
// extends that stated expired or taken (outside server faults), or a
// token read on the servers that the lock reported.
func reasonsMissing(ev measure.Evidence) (results.MissingEvidence, bool) {
	if ev.ReasonsStated == 0 {
		return results.MissingEvidence{}, false
	}
	if m, ok := tokensMissing(ev); ok {
		return m, true
	}
	if float64(ev.ReasonsJudged) < MinObservedShare*float64(ev.ReasonsStated) {
		return results.MissingEvidence{What: fmt.Sprintf("only %d of %d failed releases or extends stating expired or taken came after a read of their key that a majority of the nodes answered (need ≥ %.0f%%)", ev.ReasonsJudged, ev.ReasonsStated, 100*MinObservedShare), Fix: fixObserve}, true
	}
	return results.MissingEvidence{}, false
}

// countOf writes n and noun, with an s unless n is 1: "1 hold", "0 holds".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// chancesOf writes "1 chance to overlap" or "n chances to overlap".
func chancesOf(n int) string {
	if n == 1 {
		return "1 chance to overlap"
	}
	return fmt.Sprintf("%d chances to overlap", n)
}

// pct writes n/total as a whole percentage, "99%"; "0%" when total is 0.
func pct(n, total int) string {
	if total == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", math.Floor(100*float64(n)/float64(total)))
}
