package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// TestAdjustmentsKeepFlags: a scenario that needs a longer TTL keeps the
// user's critical section, think time and retry policy scaled with it and
// lists every change; a --ttl at or above the scenario's floor is kept with
// every flag as given. The case: --cs-min 40ms at --ttl 100ms was
// fixed(10ms) under node-restart and fixed(12.5ms) under latency, silently.
func TestAdjustmentsKeepFlags(t *testing.T) {
	ms := time.Millisecond
	fixed := func(d time.Duration) workload.CSDist { return workload.CSDist{Kind: workload.CSFixed, Min: d} }
	tests := []struct {
		name, strategy, scenario string
		w                        workload.Config
		wantTTL                  time.Duration
		wantCS, wantRetry        string
		wantDuration             time.Duration // 0: as asked
		wantThink                time.Duration
		wantFlags                []string // the Adjustment flags, in order
	}{
		{"node-restart raises the TTL, scales --cs-min", "token-lua", "node-restart",
			workload.Config{TTL: 100 * ms, Duration: 2 * time.Second, CS: fixed(40 * ms)},
			200 * ms, "fixed(80ms)", "exponential:4ms:40ms", 0, 0, []string{"--ttl", "--cs", "--retry"}},
		{"latency raises the TTL, scales --cs-min", "token-lua", "latency",
			workload.Config{TTL: 100 * ms, Duration: 2 * time.Second, CS: fixed(40 * ms)},
			250 * ms, "fixed(100ms)", "exponential:5ms:50ms", 0, 0, []string{"--ttl", "--cs", "--retry"}},
		{"--retry and --think scaled too", "token-lua", "node-restart",
			workload.Config{TTL: 100 * ms, Duration: 2 * time.Second, Retry: workload.Retry{Kind: workload.RetryFixed, Base: 3 * ms}, Think: 10 * ms},
			200 * ms, "fixed(10ms)", "fixed:6ms", 0, 20 * ms, []string{"--ttl", "--think", "--cs", "--retry"}},
		{"a uniform CS with a tail scales every bound", "token-lua", "latency",
			workload.Config{TTL: 100 * ms, Duration: 2 * time.Second, CS: workload.CSDist{Kind: workload.CSUniform, Min: 2 * ms, Max: 20 * ms, TailShare: 0.1, Tail: 200 * ms}},
			250 * ms, "uniform(5ms,50ms) tail 10%×500ms", "exponential:5ms:50ms", 0, 0, []string{"--ttl", "--cs", "--retry"}},
		{"node-restart at TTL 1 s keeps every flag, the duration grows", "token-lua", "node-restart",
			workload.Config{TTL: time.Second, Duration: 2 * time.Second, CS: fixed(400 * ms)},
			time.Second, "fixed(400ms)", "exponential:20ms:200ms", 3 * time.Second, 0, []string{"--duration"}},
		{"latency at TTL 5 s keeps every flag", "token-lua", "latency",
			workload.Config{TTL: 5 * time.Second, Duration: 30 * time.Second, CS: fixed(2 * time.Second)},
			5 * time.Second, "fixed(2s)", "exponential:100ms:1s", 0, 0, nil},
		{"sentinel-failover at TTL 5 s is not cut to 4 s", "token-lua", "sentinel-failover",
			workload.Config{TTL: 5 * time.Second, Duration: 10 * time.Second},
			5 * time.Second, "fixed(250ms)", "exponential:100ms:1s", 0, 0, nil},
		{"sentinel-failover raises 1 s to 4 s", "token-lua", "sentinel-failover",
			workload.Config{TTL: time.Second, Duration: 10 * time.Second, CS: fixed(100 * ms)},
			4 * time.Second, "fixed(400ms)", "exponential:80ms:800ms", 0, 0, []string{"--ttl", "--cs", "--retry"}},
		{"quorum behind proxies at TTL 1 s", "redlock", "partition-holder",
			workload.Config{TTL: time.Second, Duration: 10 * time.Second},
			time.Second, "fixed(50ms)", "exponential:20ms:200ms", 0, 0, []string{"--clients"}},
		{"a scenario without a TTL of its own changes nothing", "token-lua", "gc-pause",
			workload.Config{TTL: 100 * ms, Duration: 2 * time.Second, CS: fixed(40 * ms)},
			100 * ms, "fixed(40ms)", "exponential:2ms:20ms", 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Strategy: tt.strategy, Scenario: tt.scenario, Seed: 1, Workload: tt.w, Cluster: cluster.Options{Backend: cluster.BackendProcess}}
			_, _, _, w, err := s.Resolved()
			if err != nil {
				t.Fatal(err)
			}
			adj, err := s.Adjustments()
			if err != nil {
				t.Fatal(err)
			}
			if w.TTL != tt.wantTTL || w.CS.String() != tt.wantCS || w.Retry.String() != tt.wantRetry || w.Think != tt.wantThink {
				t.Errorf("ran TTL %v, cs %v, retry %v, think %v; want %v, %s, %s, %v", w.TTL, w.CS, w.Retry, w.Think, tt.wantTTL, tt.wantCS, tt.wantRetry, tt.wantThink)
			}
			wantDuration := tt.wantDuration
			if wantDuration == 0 {
				wantDuration = tt.w.Duration
			}
			if w.Duration != wantDuration {
				t.Errorf("ran %v, want %v", w.Duration, wantDuration)
			}
			var flags []string
			for _, a := range adj {
				flags = append(flags, a.Flag)
				if a.From == a.To || a.Why == "" {
					t.Errorf("adjustment %q: from = to or no reason", a)
				}
			}
			if strings.Join(flags, " ") != strings.Join(tt.wantFlags, " ") {
				t.Errorf("adjustments %q, want flags %v", adj, tt.wantFlags)
			}
			// results.json's config shows what ran, and every change.
			r, err := plan(s)
			if err != nil {
				t.Fatal(err)
			}
			c := r.out.Config
			if c.TTLMs != float64(tt.wantTTL.Milliseconds()) || c.CSMs != tt.wantCS || c.Retry != tt.wantRetry || len(c.Adjusted) != len(adj) {
				t.Errorf("results config TTL %v ms, cs %s, retry %s, adjusted %q; want %v, %s, %s and %d lines", c.TTLMs, c.CSMs, c.Retry, c.Adjusted, tt.wantTTL, tt.wantCS, tt.wantRetry, len(adj))
			}
		})
	}
}

// TestNoSettingChangesSilently: for every applicable pair at the default
// flags and with a critical section, think time and retry policy given,
// every setting the run uses other than asked (TTL, duration, clients,
// critical section, think time, retry policy) has its Adjustment.
func TestNoSettingChangesSilently(t *testing.T) {
	ms := time.Millisecond
	asked := []workload.Config{
		{Clients: 16, Keys: 1, TTL: 100 * ms, Duration: 2 * time.Second},
		{Clients: 8, Keys: 1, TTL: 100 * ms, Duration: time.Second, Think: 5 * ms, CS: workload.CSDist{Kind: workload.CSFixed, Min: 40 * ms},
			Retry: workload.Retry{Kind: workload.RetryExponential, Base: ms, Max: 10 * ms}},
	}
	for _, a := range asked {
		ask, err := a.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range strategies.All() {
			for _, sc := range chaos.All() {
				if ok, _ := sc.AppliesTo(st.Info()); !ok {
					continue
				}
				s := Spec{Strategy: st.Name(), Scenario: sc.Name, Seed: 1, Workload: a, Cluster: cluster.Options{Backend: cluster.BackendProcess}}
				_, _, _, w, err := s.Resolved()
				if err != nil {
					t.Fatalf("%s/%s: %v", st.Name(), sc.Name, err)
				}
				adj, _ := s.Adjustments()
				has := map[string]bool{}
				for _, x := range adj {
					has[x.Flag] = true
				}
				for _, c := range []struct {
					flag    string
					changed bool
				}{
					{"--ttl", w.TTL != ask.TTL}, {"--duration", w.Duration != ask.Duration}, {"--clients", w.Clients != ask.Clients},
					{"--cs", w.CS != ask.CS}, {"--think", w.Think != ask.Think}, {"--retry", w.Retry != ask.Retry},
				} {
					if c.changed != has[c.flag] {
						t.Errorf("%s/%s asked %+v: %s changed %v, adjustment listed %v (%q)", st.Name(), sc.Name, a, c.flag, c.changed, has[c.flag], adj)
					}
				}
			}
		}
	}
}
