package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// This file derives the chooser's recommendations, one line per need (a
// scenario the bench ran), from the classes of the chooser cells alone:
// which strategies kept exclusion, which kept only the resource safe by
// fencing, which are at risk or inconclusive. No text about a strategy is
// written by hand; the needs are the scenarios in a user's words.

// needs words each scenario as what a user needs the lock to withstand;
// a scenario not listed reads "under SCENARIO".
var needs = map[string]string{
	"baseline":               "with no faults",
	"long-cs":                "when a critical section outlives the TTL",
	"gc-pause":               "when the holder pauses (GC, VM stall) past the TTL",
	"crash-between":          "when a client crashes holding the lock",
	"node-restart":           "when a Redis node restarts empty",
	"node-restart-delayed":   "when a Redis node restarts empty after a delay",
	"node-restart-aof":       "when a Redis node restarts with its data (AOF)",
	"node-pause":             "when a Redis node pauses",
	"failover-lost-write":    "across a primary failover",
	"sentinel-failover":      "across a Sentinel failover",
	"failover-other-replica": "when a replica that did not acknowledge the grant is promoted",
	"partition-holder":       "when the holder is cut off from the servers",
	"latency":                "with a slow link to a node",
	"clock-jump":             "when a server's clock jumps",
	"redlock-clock-jump":     "when one quorum node's clock jumps",
	"redlock-minority-down":  "with a minority of quorum nodes down",
	"redlock-majority-down":  "with a majority of quorum nodes down",
	"random":                 "under a random mix of faults",
}

// claimNouns name the kind of lock a claim makes, in the order they are
// tried when naming what the strategies that satisfy a need share.
var claimNouns = []struct{ claim, noun string }{
	{"quorum", "a quorum lock"},
	{"fencing", "a fenced lock"},
	{"renewal", "a lock with renewal"},
	{"validity", "a lock with a validity deadline"},
	{"replica-ack", "a lock that waits for a replica"},
	{"reentrant", "a reentrant lock"},
	{"token-release", "a lock with token-checked release"},
	{"atomic-acquire", "a lock set with its TTL in one command"},
}

// recommendation is one need with what satisfies it.
type recommendation struct {
	// Need is "need exclusion " + the need's words; Scenario its scenario.
	Need, Scenario string
	// Text says which strategies satisfy it, e.g. "a quorum lock
	// (redlock, redsync)", "no strategy keeps exclusion; only fencing
	// protects the resource: fenced" or "no strategy tested satisfies it".
	Text string
}

// recommend derives one recommendation per scenario from the chooser
// rows: strategies whose cell is safe keep exclusion (named by the claim
// they alone share, when one does: see sharedClaim); those whose cell is
// resource-safe were protected by fencing only; at-risk and inconclusive
// cells are named apart and never recommended.
func recommend(rows []chooserRow, scenarios []string, infos []results.StrategyInfo) []recommendation {
	claims := map[string][]string{}
	for _, in := range infos {
		claims[in.Name] = in.Claims
	}
	var out []recommendation
	for i, sc := range scenarios {
		by := map[string][]string{}
		var ran []string
		for _, row := range rows {
			if c := row.Cells[i]; c.Ran {
				by[c.Class] = append(by[c.Class], row.Strategy)
				ran = append(ran, row.Strategy)
			}
		}
		if len(ran) == 0 {
			continue
		}
		need, ok := needs[sc]
		if !ok {
			need = "under " + sc
		}
		out = append(out, recommendation{Need: "need exclusion " + need, Scenario: sc, Text: recommendText(by, ran, claims)})
	}
	return out
}

// recommendText words one need from the strategies by chooser class
// (by), those that ran (ran) and every strategy's claims.
func recommendText(by map[string][]string, ran []string, claims map[string][]string) string {
	keep, fenced := by[cellSafe], by[cellFenced]
	var s string
	switch {
	case len(keep) > 0 && len(keep) == len(ran):
		s = fmt.Sprintf("any strategy tested (%d of %d)", len(keep), len(ran))
	case len(keep) > 0:
		s = strings.Join(keep, ", ")
		var decided []string // strategies whose cell says something: not inconclusive, unchecked or failed
		for _, st := range ran {
			if !slices.Contains(by[cellInconclusive], st) && !slices.Contains(by[cellUnchecked], st) && !slices.Contains(by[cellFailed], st) {
				decided = append(decided, st)
			}
		}
		if noun := sharedClaim(keep, decided, claims); noun != "" {
			s = noun + " (" + s + ")"
		}
	case len(fenced) > 0:
		s = "no strategy keeps exclusion; only fencing protects the resource: " + strings.Join(fenced, ", ")
	default:
		s = "no strategy tested satisfies it"
	}
	if len(keep) > 0 && len(fenced) > 0 {
		s += "; fencing also protects the resource: " + strings.Join(fenced, ", ")
	}
	for _, x := range []struct{ class, what string }{
		{cellAtRisk, "at risk (depends on timing)"},
		{cellInconclusive, "inconclusive"},
	} {
		if len(by[x.class]) > 0 {
			s += "; " + x.what + ": " + strings.Join(by[x.class], ", ")
		}
	}
	return s
}

// sharedClaim returns the noun of the first claim (claimNouns' order)
// that exactly the strategies of keep have among those whose cell decided
// something (ran: safe, resource safe, broken or at risk), "" when none
// does: a claim is named only when no strategy that failed the need, or
// is at risk, has it too.
func sharedClaim(keep, ran []string, claims map[string][]string) string {
	for _, cn := range claimNouns {
		match := true
		for _, st := range ran {
			if slices.Contains(claims[st], cn.claim) != slices.Contains(keep, st) {
				match = false
				break
			}
		}
		if match {
			return cn.noun
		}
	}
	return ""
}
