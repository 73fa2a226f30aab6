// Package redispy_test checks adapter.py, the lockbench adapter for
// redis-py's Lock (Debian's python3-redis; scripts/deps.sh installs it),
// against real redis-servers.
package redispy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/adapter"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/internal/redislog"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// TestMain silences go-redis's dial-failure lines (see internal/redislog).
func TestMain(m *testing.M) { redislog.RunTests(m) }

// command returns the adapter's command line (absolute path), after
// checking that a python3 with redis-py is there.
func command(tb testing.TB, args string) string {
	tb.Helper()
	path, err := filepath.Abs("adapter.py")
	if err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command("python3", path).CombinedOutput(); err != nil {
		tb.Fatalf("python3 %s: %v\n%s\n(install redis-py with scripts/deps.sh: Debian's python3-redis)", path, err, out)
	}
	return "python3 " + path + args
}

// TestDeclaredClaims: the hello declares what redis-py's Lock does:
// token-checked release and atomic acquire, nothing else; renewal only
// with --renew, through extend requests.
func TestDeclaredClaims(t *testing.T) {
	for _, tt := range []struct {
		args string
		want impl.Claims
	}{
		{"", impl.Claims{AtomicAcquire: true, TokenRelease: true}},
		{" --renew", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}},
	} {
		st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+command(t, tt.args), adapterclient.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		in := st.Info()
		if in.Claims != tt.want || in.Nodes != 1 || in.Policy != (impl.Policy{HonourLost: tt.want.Renewal}) {
			t.Errorf("%q: claims %+v, nodes %d, policy %+v; want %+v, 1 node", tt.args, in.Claims, in.Nodes, in.Policy, tt.want)
		}
		if !in.ClientClock.Steppable { // Python reads its clocks through libc: client-clock-step applies
			t.Errorf("%q: the clock shim cannot step a Python adapter's clock: %s", tt.args, in.ClientClock.Why)
		}
	}
}

// FullEnv names the environment variable that makes TestVerdicts run
// redis-py's Lock, plain and with --renew, under every scenario of the ci
// profile (the chooser's cells; ~2 min on 2 cores). Unset: the three runs
// that prove the protocol's faults on a Python adapter (~10 s).
const FullEnv = "LOCKBENCH_ADAPTER_SWEEP"

// TestVerdicts runs redis-py's Lock under the faults its claims decide
// and judges each run against the expectation those claims predict
// (verdicts.FromClaims): nothing may contradict it; a run short of
// evidence is logged. By default three runs: gc-pause (SIGSTOP of the
// Python process) must break the plain Lock, as token-lua; long-cs must
// hold with --renew (extend requests keep the lease, as watchdog);
// client-clock-step (the Python process's wall clock stepped back through
// the clock shim) must break the plain Lock, which checks nothing.
func TestVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, "python3")...)
	plain, renew := command(t, ""), command(t, " --renew")
	out := t.TempDir()
	ci, err := bench.LookupProfile("ci")
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		command, scenario string
		exclusion         checker.Status
	}
	cells := []cell{{plain, "gc-pause", "violated"}, {renew, "long-cs", "ok"}, {plain, "client-clock-step", "violated"}}
	// Six Python clients start in a second or two on a busy machine; the
	// sweep runs the chooser's workload (16 clients).
	w := workload.Config{Clients: 6, TTL: 200 * time.Millisecond, Duration: 2 * time.Second}
	if os.Getenv(FullEnv) != "" {
		cells, w = nil, ci.Workload
		for _, c := range []string{plain, renew} {
			for _, sc := range ci.Scenarios {
				if sc != "redlock-clock-jump" { // quorum locks only
					cells = append(cells, cell{c, sc, ""})
				}
			}
		}
		// An adapter's clock stepped back (not in the ci profile: adapters
		// only): the plain Lock checks nothing, a renewed one is kept.
		cells = append(cells, cell{plain, "client-clock-step", "violated"}, cell{renew, "client-clock-step", "ok"})
	}
	for _, tt := range cells {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		r, err := bench.Run(ctx, bench.Spec{Strategy: adapterclient.ExecPrefix + tt.command, Scenario: tt.scenario, Seed: 1, Workload: w, OutDir: out})
		cancel()
		if err != nil {
			t.Fatalf("%s under %s: %v", tt.command, tt.scenario, err)
		}
		name := filepath.Base(tt.command)
		t.Logf("%s under %s: expected %s, %+v, %d grants: %s %v", name, tt.scenario, r.Expected, r.Verdict, r.Grants, r.Outcome(), r.Inconclusive)
		switch {
		case r.Outcome() == results.OutcomeUnexpected:
			t.Errorf("%s under %s: contradicts what its claims predict (%s): %v", name, tt.scenario, r.Reason, r.Unexpected)
		case r.Grants == 0:
			t.Errorf("%s under %s: no grants", name, tt.scenario)
		case tt.exclusion != "" && r.Verdict.Exclusion != tt.exclusion && r.Verdict.Exclusion != "inconclusive":
			t.Errorf("%s under %s: exclusion %s, want %s", name, tt.scenario, r.Verdict.Exclusion, tt.exclusion)
		}
	}
}

// BenchmarkRedisPy measures the Python adapter's cost per call: the round
// trip of a no-op request (ping) and one acquire plus one release against
// one redis-server.
func BenchmarkRedisPy(b *testing.B) {
	cmd := command(b, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	cfg := impl.Config{Endpoints: []string{c.Nodes()[0].Addr()}, TTL: 10 * time.Second, Owner: "bench"}
	b.Run("ping", func(b *testing.B) {
		ctx := context.Background()
		p, err := adapter.Start(ctx, adapter.Options{Command: cmd})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		if err := p.Init(ctx, cfg.Endpoints, cfg.TTL, cfg.Owner); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := p.Call(ctx, adapter.Message{Type: adapter.TypePing}, time.Now().Add(time.Second), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("acquire-release", func(b *testing.B) {
		st, err := strategies.Lookup(adapterclient.ExecPrefix + cmd)
		if err != nil {
			b.Fatal(err)
		}
		l, err := st.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		b.ResetTimer()
		for range b.N {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			lease, err := l.Acquire(ctx, "bench:k")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}

// TestDocShowsAdapter: docs/protocol.md shows adapter.py whole, as it is.
func TestDocShowsAdapter(t *testing.T) {
	src, err := os.ReadFile("adapter.py")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```python\n"+string(src)+"```\n") {
		t.Error("docs/protocol.md does not show adapters/redis-py/adapter.py as it is: copy the file into its python block")
	}
}
