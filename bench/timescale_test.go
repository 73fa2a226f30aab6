package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// timeScalePairs are the named canaries and must-holds TestVerdictsTimeScale
// runs: a canary and a must-hold of the client-side faults for a plain,
// a fenced and a renewing lock, the quorum lock's baseline, and a
// liveness canary.
var timeScalePairs = []struct{ strategy, scenario string }{
	{"token-lua", "gc-pause"},  // must break
	{"fenced", "gc-pause"},     // exclusion must break, the resource must hold
	{"watchdog", "long-cs"},    // must hold: renewal keeps the key
	{"token-lua", "baseline"},  // must hold
	{"redlock", "baseline"},    // must hold; per-node timeouts follow the TTL
	{"naive", "crash-between"}, // liveness must break: a key without TTL
}

// timeScales are the TTLs of TestVerdictsTimeScale and the run duration at
// each: 20 TTLs at 50 ms, 4 TTLs at 2 s (critical sections and the
// scenarios' faults scale with the TTL, so a 2 s TTL grants about ten
// times a second on one key; 8 s leaves room for gc-pause's three 4 s
// pauses to strike and be seen).
var timeScales = []struct {
	ttl, duration time.Duration
}{{50 * time.Millisecond, time.Second}, {2 * time.Second, 8 * time.Second}}

// TestVerdictsTimeScale: verdicts must not depend on the time scale. The
// named canaries and must-holds (timeScalePairs) run at TTL 50 ms and at
// TTL 2 s with one seed (LOCKBENCH_SEED, default 1): each run gives the
// verdict the table expects, or is inconclusive naming the evidence it
// lacked; never unexpected. The TTL 2 s runs mostly wait, so all six run
// at once; the TTL 50 ms runs, whose budgets a busy machine eats, one at
// a time. About 20 s.
func TestVerdictsTimeScale(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server for 12 runs, up to 12 s each; skipped with -short")
	}
	seed := int64(1)
	if v, err := strconv.ParseInt(os.Getenv("LOCKBENCH_SEED"), 10, 64); err == nil && v > 0 {
		seed = v
	}
	out := t.TempDir()
	// Outcomes per pair and scale, for the summary at the end.
	var mu sync.Mutex
	seen := map[string][]string{}
	for _, sc := range timeScales {
		t.Run("ttl-"+sc.ttl.String(), func(t *testing.T) {
			type ran struct {
				r   results.Run
				err error
			}
			runPair := func(strategy, scenario string) ran {
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				w := workload.Config{Clients: 16, Keys: 1, TTL: sc.ttl, Duration: sc.duration}
				r, err := Run(ctx, Spec{Strategy: strategy, Scenario: scenario, Seed: seed, Workload: w, OutDir: out})
				return ran{r, err}
			}
			// The TTL 2 s runs mostly wait (a grant or two a second per
			// client), so all of them run at once, before their checks;
			// the TTL 50 ms runs, whose budgets a busy machine eats, one
			// at a time in their subtests.
			early := map[string]ran{}
			if sc.ttl >= time.Second {
				var wg sync.WaitGroup
				for _, p := range timeScalePairs {
					wg.Go(func() {
						res := runPair(p.strategy, p.scenario)
						mu.Lock()
						early[p.strategy+"/"+p.scenario] = res
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			for _, p := range timeScalePairs {
				name := p.strategy + "/" + p.scenario
				t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
					res, ok := early[name]
					if !ok {
						res = runPair(p.strategy, p.scenario)
					}
					r, err := res.r, res.err
					if err != nil {
						t.Fatalf("%s at TTL %v: %v", name, sc.ttl, err)
					}
					if r.Expected == "at-risk" {
						t.Fatalf("%s at TTL %v is not gated (%s): the test needs a canary or a must-hold", name, sc.ttl, r.Reason)
					}
					switch r.Outcome() {
					case results.OutcomeUnexpected:
						t.Errorf("%s at TTL %v seed %d: unexpected: %s (evidence: %s)", name, sc.ttl, seed, strings.Join(r.Unexpected, "; "), r.Evidence)
					case results.OutcomeInconclusive:
						for _, line := range r.Inconclusive {
							if !strings.Contains(line, "inconclusive: ") || !strings.Contains(line, "(") {
								t.Errorf("%s at TTL %v: inconclusive line %q names no missing evidence", name, sc.ttl, line)
							}
						}
						for check, m := range r.Missing {
							if m.What == "" {
								t.Errorf("%s at TTL %v: %s inconclusive without saying what is missing", name, sc.ttl, check)
							}
						}
					}
					verdict := fmt.Sprintf("TTL %v: %s (exclusion %s, resource %s, liveness %s; %d holds, %d chances to overlap, %.0f%% unknown)",
						sc.ttl, r.Outcome(), r.Verdict.Exclusion, r.Verdict.Resource, r.Verdict.Liveness,
						r.Evidence.Holds, r.Evidence.ChancesToOverlap, 100*r.Evidence.UnknownShare())
					if len(r.Inconclusive) > 0 {
						verdict += ": " + strings.Join(r.Inconclusive, "; ")
					}
					t.Log(verdict)
					mu.Lock()
					seen[name] = append(seen[name], verdict)
					mu.Unlock()
				})
			}
		})
	}
	for _, p := range timeScalePairs {
		name := p.strategy + "/" + p.scenario
		t.Logf("%s:\n  %s", name, strings.Join(seen[name], "\n  "))
	}
}
