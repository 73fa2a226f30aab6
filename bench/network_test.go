package bench

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

var (
	movedRe = regexp.MustCompile(`moved \+([0-9.]+)ms`)
	pingRe  = regexp.MustCompile(`PING through the link took ([0-9.]+)ms`)
)

// msIn returns the numbers re's first group matches in s, in ms.
func msIn(t *testing.T, re *regexp.Regexp, s string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("parse %q: %v", m[1], err)
		}
		out = append(out, v)
	}
	return out
}

// TestNetworkFaultsAreReal runs one pair of each network scenario through
// Run and checks, from the recorded history, that the faults happened:
// clock jumps moved the server's TIME reply by at least the jump, cut links
// refused connects, the slow node's PING took the added round trip, and the
// random mix recorded its kinds with evidence and left a live system.
func TestNetworkFaultsAreReal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server; skipped with -short")
	}
	ttl := 50 * time.Millisecond
	cases := []struct {
		strategy, scenario string
		check              func(t *testing.T, r results.Run, notes []string)
	}{
		{"token-lua", "clock-jump", func(t *testing.T, r results.Run, notes []string) {
			moved := msIn(t, movedRe, strings.Join(notes, "\n"))
			if len(moved) == 0 {
				t.Fatalf("no clock jump recorded: %q", notes)
			}
			for _, m := range moved {
				if m < float64(2*ttl/time.Millisecond) {
					t.Errorf("TIME moved %.3f ms, want >= 2×TTL", m)
				}
			}
			if r.Verdict.Exclusion != "violated" {
				t.Errorf("exclusion %s, want violated", r.Verdict.Exclusion)
			}
		}},
		{"redlock", "redlock-clock-jump", func(t *testing.T, r results.Run, notes []string) {
			all := strings.Join(notes, "\n")
			if !strings.Contains(all, "client 0 cut off from n4,n5 (connect refused), client 1 from n1,n2 (connect refused)") {
				t.Errorf("partition without evidence: %q", notes)
			}
			if moved := msIn(t, movedRe, all); len(moved) == 0 || moved[0] < float64(2*ttl/time.Millisecond) {
				t.Errorf("n3's TIME moved %v ms, want >= 2×TTL", moved)
			}
			if !strings.Contains(all, "n3 clock") {
				t.Errorf("the jump is not on n3: %q", notes)
			}
		}},
		{"fenced", "partition-holder", func(t *testing.T, r results.Run, notes []string) {
			if len(notes) != 2 {
				t.Errorf("%d partitions, want 2: %q", len(notes), notes)
			}
			for _, n := range notes {
				if !strings.Contains(n, "connect refused") {
					t.Errorf("cut link accepted a connect: %q", n)
				}
			}
			if r.Verdict.Exclusion != "violated" || r.Verdict.Resource != "ok" {
				t.Errorf("exclusion %s resource %s, want violated and ok", r.Verdict.Exclusion, r.Verdict.Resource)
			}
		}},
		{"redlock", "latency", func(t *testing.T, r results.Run, notes []string) {
			rtt := msIn(t, pingRe, strings.Join(notes, "\n"))
			if len(rtt) != 1 || rtt[0] < float64(2*chaos.LatencyEachWay/time.Millisecond) {
				t.Errorf("PING through the slow link %v ms, want >= %v: %q", rtt, 2*chaos.LatencyEachWay, notes)
			}
			if r.Liveness.GrantsDuringFaults == 0 {
				t.Errorf("no grant during the latency window")
			}
		}},
		{"token-lua", "random", randomCheck},
		{"redlock", "random", randomCheck},
	}
	out := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.strategy+"_"+tc.scenario, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			w := workload.Config{Clients: 8, TTL: ttl, Duration: 400 * time.Millisecond}
			// runCase runs the pair and returns its nemesis notes and
			// whether any fault window landed.
			runCase := func() (results.Run, []string, bool) {
				r, err := Run(ctx, Spec{Strategy: tc.strategy, Scenario: tc.scenario, Seed: 1, Workload: w, OutDir: out})
				if err != nil {
					t.Fatal(err)
				}
				_, ops, err := history.Load(filepath.Join(out, r.History))
				if err != nil {
					t.Fatal(err)
				}
				var notes []string
				landed := false
				for _, op := range ops {
					if op.Kind == history.Nemesis {
						notes = append(notes, op.Note)
						landed = landed || op.Landing == history.Landed
					}
				}
				return r, notes, landed
			}
			r, notes, landed := runCase()
			if tc.scenario == "redlock-clock-jump" && !landed {
				// A jump lands when client 0 held n1-n3 at a trigger and
				// client 1 was granted n3-n5 meanwhile (the split vote);
				// when none did in the run, it runs once more.
				t.Logf("no clock jump landed (%q); running it again once", notes)
				r, notes, _ = runCase()
			}
			tc.check(t, r, notes)
		})
	}
}

// randomCheck: the random mix recorded at least two kinds of fault, each
// with its evidence, and the healed system passed the liveness probe.
func randomCheck(t *testing.T, r results.Run, notes []string) {
	t.Helper()
	kinds := map[string]int{}
	evidence := map[string]string{"random/kill": "SIGKILLed (gone", "random/pause": "state T", "random/partition": "connect refused", "random/clock-jump": "moved +", "random/latency": "PING", "random/key-loss": "read back:"}
	for _, n := range notes {
		kind, _, _ := strings.Cut(n, ":")
		kinds[kind]++
		if e, ok := evidence[kind]; !ok || !strings.Contains(n, e) {
			t.Errorf("fault without evidence %q: %q", e, n)
		}
	}
	// A quorum run at chaos.QuorumProxiedTTL has room for two or three
	// faults of the mix's six kinds: two kinds make it a mix.
	if len(kinds) < 2 {
		t.Errorf("kinds %v, want at least 2 over %.0f ms", kinds, r.DurationS*1000)
	}
	t.Logf("kinds %v over %.0f ms", kinds, r.DurationS*1000)
	if r.Verdict.Liveness != "ok" {
		t.Errorf("liveness after heal %s: %s", r.Verdict.Liveness, r.Checks["liveness"])
	}
}
