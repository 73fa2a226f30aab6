package validate

import (
	"path/filepath"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
)

// CheckHistory is `lockbench check` after loading: it runs every check on
// a history read from path (h, ops), judges the report against the
// history's expectation (verdicts.ForHeader; the renewal check's options
// from verdicts.RenewalOptions, whatever o says) and returns the run as results.json
// would hold it, the checker's report and the expectation. Paths written
// into the run (visualisations) are relative to path's folder. Errors
// come from the latency figures of a malformed history.
func CheckHistory(path string, h history.Header, ops []history.Operation, o checker.Options) (results.Run, checker.Report, verdicts.Expectation, error) {
	o.Renewal = verdicts.RenewalOptions(h.Strategy, h.Scenario)
	rep := checker.Check(h, ops, o)
	exp := verdicts.ForHeader(h)
	r := results.Run{Strategy: h.Strategy, Scenario: h.Scenario, Seed: h.Seed, History: path}
	if err := FromHistory(&r, h, ops); err != nil {
		return r, rep, exp, err
	}
	Fill(&r, ops, rep, exp, filepath.Dir(path))
	return r, rep, exp, nil
}
