package locktest

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
)

// builtinAsGo is the locktest strategy a team would declare for the
// built-in strategy st: its claims, its server and its crash point.
func builtinAsGo(st impl.Strategy) (*strategy, options) {
	in := st.Info()
	c := in.Claims
	server := Redis
	switch in.Server {
	case impl.ServerEtcd:
		server = Etcd
	case impl.ServerZooKeeper:
		server = ZooKeeper
	}
	claims := Claims{AtomicAcquire: c.AtomicAcquire, TokenRelease: c.TokenRelease, Renewal: c.Renewal,
		Fencing: c.Fencing, Validity: c.Validity, Quorum: c.Quorum, Reentrant: c.Reentrant}
	return &strategy{name: "go:" + st.Name(), claims: claims, server: server, crash: string(in.CrashPoint)},
		options{seed: 1, server: server, crash: string(in.CrashPoint)}
}

// TestSameExpectations: for every built-in strategy of lockbench bench's
// ci profile under every ci scenario it runs there, the run locktest.Run
// makes of a Go lock declaring the same claims (and crash point) has the
// same usage policy, the same workload (TTL, duration, clients, nesting,
// adjustments) and the same expectation as lockbench run gives the
// built-in strategy (bench.Plan: nothing is started); the only
// differences allowed are the verdict rows that differ from their claims
// with a documented reason (verdicts.ClaimsExceptions), and the TTL the
// profile raises for a lock whose call budget needs it (redsync,
// redsync-single: strategies.Budgeted), each logged.
func TestSameExpectations(t *testing.T) {
	ci, err := bench.LookupProfile("ci")
	if err != nil {
		t.Fatal(err)
	}
	var pairs, excepted, enveloped int
	for _, name := range ci.Strategies {
		st, err := strategies.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		goSt, o := builtinAsGo(st)
		if got, want := goSt.Info().Policy, st.Info().Policy; got != want {
			t.Errorf("%s: locktest's usage policy %+v, the built-in's %+v", name, got, want)
		}
		for _, sc := range ci.Scenarios {
			if only, ok := ci.Only[name]; ok && !slices.Contains(only, sc) {
				continue
			}
			direct := bench.Spec{Strategy: name, Scenario: sc, Seed: 1, Workload: bench.WorkloadFor(st, ci, sc),
				Cluster: cluster.Options{Backend: cluster.BackendProcess}}
			dr, dw, err := bench.Plan(direct)
			if err != nil {
				continue // the scenario does not apply to the strategy: bench marks it n/a
			}
			o.scenarios = []string{sc}
			specs, _, err := o.specs(goSt, "TestX", false)
			if err != nil {
				t.Errorf("%s × %s: lockbench run plans it, locktest refuses it: %v", name, sc, err)
				continue
			}
			vr, vw, err := bench.Plan(specs[0])
			if err != nil {
				t.Errorf("%s × %s: %v", name, sc, err)
				continue
			}
			pairs++
			if _, budgeted := strategies.BudgetOf(st, ci.Workload.TTL); budgeted && !reflect.DeepEqual(vw, dw) {
				// The profile raises the TTL of a lock whose call budget
				// (a library's timeout, TTL-derived) is below what a busy
				// machine's round trips need; a Go lock declares none.
				enveloped++
				t.Logf("%s × %s: the ci profile's envelope (its call budget) runs it at TTL %v, critical section %v; locktest at TTL %v, critical section %v (WithTTL sets the TTL)", name, sc, dw.TTL, dw.CS, vw.TTL, vw.CS)
			} else if !reflect.DeepEqual(vw, dw) {
				t.Errorf("%s × %s: locktest's workload\n  %+v\nlockbench run's\n  %+v", name, sc, vw, dw)
			} else if !slices.Equal(adjustments(vr), adjustments(dr)) {
				t.Errorf("%s × %s: locktest's adjustments %q, lockbench run's %q", name, sc, vr.Config.Adjusted, dr.Config.Adjusted)
			}
			if vr.Expected == dr.Expected && maps.Equal(vr.ExpectedChecks, dr.ExpectedChecks) {
				continue
			}
			if why, ok := verdicts.ClaimsExceptions[[2]string{name, sc}]; ok {
				excepted++
				t.Logf("%s × %s: locktest expects %s (from the claims), lockbench run %s (its row): %s", name, sc, vr.Expected, dr.Expected, why)
				continue
			}
			t.Errorf("%s × %s: locktest expects %s %v, lockbench run %s %v", name, sc, vr.Expected, vr.ExpectedChecks, dr.Expected, dr.ExpectedChecks)
		}
	}
	t.Logf("%d pairs of %d ci strategies: the same expectation but for %d documented exception(s); the same workload but for %d pairs of locks with a call budget", pairs, len(ci.Strategies), excepted, enveloped)
	if pairs < 50 {
		t.Errorf("only %d pairs compared: the ci profile changed?", pairs)
	}
}

// TestJudged: a run's outcome is reported as lockbench run exits: an
// unexpected verdict fails the test; a busy machine (bench.ErrOverloaded)
// and an inconclusive run are logged and never fail it; an environment
// error names the install step (a skip under -short).
func TestJudged(t *testing.T) {
	s := bench.Spec{Strategy: "go:X", Scenario: "baseline", Seed: 1, Cluster: cluster.Options{Backend: cluster.BackendProcess}}
	run := func(exp, excl string, unexpected, inconclusive []string) results.Run {
		return results.Run{Scenario: "baseline", Seed: 1, Expected: exp, Unexpected: unexpected, Inconclusive: inconclusive,
			AsExpected: len(unexpected) == 0 && len(inconclusive) == 0, Verdict: results.Verdict{Exclusion: checkerStatus(excl)}}
	}
	tests := []struct {
		name       string
		r          results.Run
		err        error
		wantFail   bool
		wantOK     bool
		wantInText string
	}{
		{"as expected", run("must-hold", "ok", nil, nil), nil, false, true, "as expected"},
		{"unexpected", run("must-hold", "violated", []string{"exclusion must hold but is violated"}, nil), nil, true, true, "UNEXPECTED: exclusion must hold"},
		{"inconclusive", run("must-hold", "inconclusive", nil, []string{"exclusion: too few holds"}), nil, false, true, "INCONCLUSIVE"},
		{"busy machine", run("must-hold", "violated", []string{"exclusion must hold but is violated"}, nil),
			fmt.Errorf("go:X/baseline seed 1: %w: a client stalled", bench.ErrOverloaded), false, true, "INCONCLUSIVE"},
		{"no redis-server", results.Run{}, fmt.Errorf("%w: redis-server not found", cluster.ErrEnvironment), true, false, "make deps"},
		{"run failed", results.Run{}, errors.New("boom"), true, false, "could not run: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fakeTB{TB: t}
			var ok bool
			rec.do(func() { ok = judged(rec, s, tc.r, tc.err) })
			wantFail := tc.wantFail
			if tc.name == "no redis-server" && testing.Short() {
				wantFail = false // skipped instead, naming the install step
				if !rec.skiped {
					t.Errorf("not skipped under -short:\n%s", rec.text.String())
				}
			}
			if rec.failed != wantFail || (ok != tc.wantOK && !rec.fatal && !rec.skiped) {
				t.Errorf("failed %v, ok %v; want failed %v, ok %v:\n%s", rec.failed, ok, wantFail, tc.wantOK, rec.text.String())
			}
			if !strings.Contains(rec.text.String(), tc.wantInText) {
				t.Errorf("the report does not say %q:\n%s", tc.wantInText, rec.text.String())
			}
		})
	}
}

func checkerStatus(s string) checker.Status { return checker.Status(s) }

// fakeTB records what is reported to it instead of failing the test;
// Fatal, Skip and FailNow end the goroutine do runs f on.
type fakeTB struct {
	testing.TB
	mu                    sync.Mutex
	failed, fatal, skiped bool
	text                  strings.Builder
}

func (f *fakeTB) note(failed bool, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = f.failed || failed
	fmt.Fprintf(&f.text, format+"\n", args...)
}
func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Errorf(format string, args ...any) { f.note(true, format, args...) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.note(true, format, args...)
	f.fatal = true
	runtime.Goexit()
}
func (f *fakeTB) Logf(format string, args ...any) { f.note(false, format, args...) }
func (f *fakeTB) Fatal(args ...any)               { f.Fatalf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Skip(args ...any) {
	f.note(false, "%s", fmt.Sprint(args...))
	f.skiped = true
	runtime.Goexit()
}

// do runs fn on a goroutine of its own, so that Fatal and Skip end it.
func (f *fakeTB) do(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// adjustments are r's workload adjustments without their reasons
// ("--ttl 100ms → 1s"): the reasons name the strategy.
func adjustments(r results.Run) []string {
	out := make([]string, len(r.Config.Adjusted))
	for i, a := range r.Config.Adjusted {
		out[i], _, _ = strings.Cut(a, " (")
	}
	return out
}
