package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/adapter"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/internal/redislog"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
	"github.com/lockbench/lockbench/workload"
)

// TestMain silences go-redis's dial-failure lines (see internal/redislog)
// and builds this adapter once for every test (binDir), removed at the end.
func TestMain(m *testing.M) {
	redislog.Quiet()
	dir, err := os.MkdirTemp("", "lockbench-adapter-go-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// adapterComm is this adapter's command name as /proc shows it (15 bytes).
const adapterComm = "lockbench-adapt"

// binDir holds the adapter the tests build (TestMain sets it once).
var binDir string

// buildOnce guards the one build of the adapter into binDir.
var buildOnce struct {
	sync.Once
	out []byte
	err error
}

// build compiles this adapter once (into binDir) and returns its path.
func build(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(binDir, "lockbench-adapter-go")
	buildOnce.Do(func() {
		buildOnce.out, buildOnce.err = exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	})
	if buildOnce.err != nil {
		tb.Fatalf("go build: %v\n%s", buildOnce.err, buildOnce.out)
	}
	return bin
}

// SeedsEnv names the environment variable that turns TestSameVerdicts
// into the full sweep: every scenario of the ci profile for token-lua,
// watchdog and redlock, that many seeds each (the must-show is 5:
// LOCKBENCH_SAME_VERDICTS_SEEDS=5, about 15 min on 2 cores). Unset: one
// seed of three pairs, ~20 s, for make test.
const SeedsEnv = "LOCKBENCH_SAME_VERDICTS_SEEDS"

// sameVerdictsCells returns the cells TestSameVerdicts runs in-process and
// through the adapter: the ci profile's cells (its workload and scenarios,
// each with its own setup) for token-lua, watchdog and redlock, seeds
// 1..seeds; with full false, one seed of three pairs.
func sameVerdictsCells(tb testing.TB, seeds int, full bool) []bench.Spec {
	tb.Helper()
	ci, err := bench.LookupProfile("ci")
	if err != nil {
		tb.Fatal(err)
	}
	if !full {
		var specs []bench.Spec
		for _, p := range [][2]string{{"token-lua", "gc-pause"}, {"watchdog", "long-cs"}, {"redlock", "partition-holder"}} {
			specs = append(specs, bench.Spec{Strategy: p[0], Scenario: p[1], Seed: 1, Workload: ci.Workload})
		}
		return specs
	}
	// As a bench orders its cells: by scenario, then seed, then strategy;
	// a pair whose scenario does not apply is left out.
	var specs []bench.Spec
	for _, name := range ci.Scenarios {
		sc, err := chaos.Lookup(name)
		if err != nil {
			tb.Fatal(err)
		}
		for seed := int64(1); seed <= int64(seeds); seed++ {
			for _, st := range []string{"token-lua", "watchdog", "redlock"} {
				strat, err := strategies.Lookup(st)
				if err != nil {
					tb.Fatal(err)
				}
				if ok, _ := sc.AppliesTo(strat.Info()); ok {
					specs = append(specs, bench.Spec{Strategy: st, Scenario: name, Seed: seed, Workload: ci.Workload})
				}
			}
		}
	}
	return specs
}

// TestSameVerdicts runs built-in strategies in-process and through this
// adapter (exec:) with the same cell (scenario, workload, seed): every
// check that reached a verdict both ways must reach the same one. A check
// inconclusive on either side (too little evidence, validate's rules) is
// no mismatch: it is counted and reported, as is a cell the machine was
// too busy for (bench.ErrOverloaded) and a difference in a check the
// verdict table marks at risk (its outcome depends on timing). The table of the sweep is
// logged (go test -v). See SeedsEnv for the full sweep.
func TestSameVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	seeds, full := 1, false
	if v := os.Getenv(SeedsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of seeds ≥ 1", SeedsEnv, v)
		}
		seeds, full = n, true
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	out := t.TempDir()
	type tally struct{ cells, same, inconclusive, overloaded, atRisk, mismatch int }
	var order [][2]string
	byPair := map[[2]string]*tally{}
	for _, s := range sameVerdictsCells(t, seeds, full) {
		pair := [2]string{s.Strategy, s.Scenario}
		if byPair[pair] == nil {
			byPair[pair] = &tally{}
			order = append(order, pair)
		}
		tl := byPair[pair]
		tl.cells++
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s.OutDir = out
		in, err := bench.Run(ctx, s)
		var ex results.Run
		if err == nil {
			s.Strategy = adapterclient.ExecPrefix + bin + " --strategy " + s.Strategy
			ex, err = bench.Run(ctx, s)
		}
		cancel()
		switch {
		case errors.Is(err, bench.ErrOverloaded):
			// The machine was too busy for a verdict to mean anything
			// (exit 3 in lockbench): reported, not compared.
			tl.overloaded++
			t.Logf("%s/%s seed %d: overloaded, not compared: %v", pair[0], s.Scenario, s.Seed, err)
			continue
		case err != nil:
			t.Fatalf("%s/%s seed %d: %v", pair[0], s.Scenario, s.Seed, err)
		}
		exp, _ := verdicts.Expected(pair[0], s.Scenario)
		inconclusive, atRisk, mismatch := compareVerdicts(in.Verdict, ex.Verdict, exp)
		switch {
		case len(mismatch) > 0:
			tl.mismatch++
			t.Errorf("%s/%s seed %d: %s (in-process %+v, %d grants; adapter %+v, %d grants)", pair[0], s.Scenario, s.Seed,
				strings.Join(mismatch, ", "), in.Verdict, in.Grants, ex.Verdict, ex.Grants)
		case len(atRisk) > 0:
			// The verdict table says the outcome depends on timing the
			// seed does not fix: two runs may differ either way.
			tl.atRisk++
			t.Logf("%s/%s seed %d: at risk (timing), differs: %s", pair[0], s.Scenario, s.Seed, strings.Join(atRisk, ", "))
		case len(inconclusive) > 0:
			// Too little evidence on a side (e.g. a run that granted
			// nothing on a busy machine): reported, not compared.
			tl.inconclusive++
			t.Logf("%s/%s seed %d: inconclusive, not compared: %s (grants: %d in-process, %d through the adapter)",
				pair[0], s.Scenario, s.Seed, strings.Join(inconclusive, ", "), in.Grants, ex.Grants)
		default:
			tl.same++
		}
	}
	var b strings.Builder
	b.WriteString("| strategy | scenario | seeds | same verdicts | inconclusive | overloaded | at risk, differs | mismatch |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range order {
		tl := byPair[p]
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d |\n", p[0], p[1], tl.cells, tl.same, tl.inconclusive, tl.overloaded, tl.atRisk, tl.mismatch)
	}
	t.Logf("in-process vs exec:%s --strategy S, %d seed(s):\n%s", filepath.Base(bin), seeds, b.String())
}

// compareVerdicts compares two runs' verdicts check by check: the checks
// inconclusive on either side (not compared), the checks that differ where
// the expectation exp says at risk (timing the seed does not fix), and the
// checks that reached different verdicts.
func compareVerdicts(a, b results.Verdict, exp verdicts.Expectation) (inconclusive, atRisk, mismatch []string) {
	for _, c := range []struct {
		name string
		a, b checker.Status
		exp  verdicts.Expect
	}{
		{"exclusion", a.Exclusion, b.Exclusion, exp.Exclusion}, {"resource", a.Resource, b.Resource, exp.Resource},
		{"liveness", a.Liveness, b.Liveness, exp.Liveness}, {"fencing", a.Fencing, b.Fencing, exp.Fencing},
	} {
		diff := fmt.Sprintf("%s %s in-process, %s through the adapter", c.name, c.a, c.b)
		switch {
		case c.a == checker.Inconclusive || c.b == checker.Inconclusive:
			inconclusive = append(inconclusive, fmt.Sprintf("%s %s/%s", c.name, c.a, c.b))
		case c.a == c.b:
		case c.exp == verdicts.AtRisk:
			atRisk = append(atRisk, diff)
		default:
			mismatch = append(mismatch, diff)
		}
	}
	return inconclusive, atRisk, mismatch
}

// startRedis starts one redis-server, stopped when tb ends, and returns its address.
func startRedis(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		tb.Fatalf("cluster.Start: %v", err)
	}
	tb.Cleanup(func() { c.Stop() })
	return c.Nodes()[0].Addr()
}

// BenchmarkProtocol measures what the process protocol costs per call:
// the round trip of a no-op request (ping) through the pipes, and one
// acquire plus one release of token-lua in-process and through this
// adapter, against one redis-server.
func BenchmarkProtocol(b *testing.B) {
	bin := build(b)
	addr := startRedis(b)
	cfg := impl.Config{Endpoints: []string{addr}, TTL: 10 * time.Second, Owner: "bench"}
	b.Run("ping", func(b *testing.B) {
		ctx := context.Background()
		p, err := adapter.Start(ctx, adapter.Options{Command: bin + " --strategy token-lua"})
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
	st, _ := strategies.Lookup("token-lua")
	node := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4, ContextTimeoutEnabled: true})
	defer node.Close()
	inCfg := cfg
	inCfg.Nodes = []redis.UniversalClient{node}
	b.Run("acquire-release/in-process", func(b *testing.B) { acquireRelease(b, st, inCfg) })
	ex, err := strategies.Lookup(adapterclient.ExecPrefix + bin + " --strategy token-lua")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("acquire-release/adapter", func(b *testing.B) { acquireRelease(b, ex, cfg) })
}

// acquireRelease runs one acquire and one release of one key per iteration.
func acquireRelease(b *testing.B, st impl.Strategy, cfg impl.Config) {
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
}

// TestCrashPoint: naive served by this adapter declares the point between
// SETNX and PEXPIRE; a hook that crashes the client there kills the
// adapter at that point, so the key is left without a TTL.
func TestCrashPoint(t *testing.T) {
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+bin+" --strategy naive", adapterclient.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var points []impl.Point
	hook := func(_ context.Context, p impl.Point) error {
		points = append(points, p)
		return impl.ErrCrashed
	}
	l, err := st.New(impl.Config{Endpoints: []string{addr}, TTL: time.Second, Owner: "c0", Hook: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := l.Acquire(ctx, "k"); !errors.Is(err, impl.ErrCrashed) {
		t.Fatalf("Acquire: %v, want impl.ErrCrashed", err)
	}
	if len(points) != 1 || points[0] != impl.PointAfterSetNX {
		t.Errorf("hook saw %v, want [%s]", points, impl.PointAfterSetNX)
	}
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	if ttl, err := rc.PTTL(ctx, "k").Result(); err != nil || ttl != -1 {
		t.Errorf("PTTL k = %v, %v; want -1 (set, no TTL: the adapter died between SETNX and PEXPIRE)", ttl, err)
	}
	if _, err := l.Acquire(ctx, "k2"); !errors.Is(err, impl.ErrCrashed) {
		t.Errorf("Acquire after the crash: %v, want impl.ErrCrashed", err)
	}
}

// TestClockNotSteppable: lockbench finds that a Go adapter's clock cannot
// be stepped (Go reads it through the vDSO, not libc), so
// client-clock-step is n/a for it, naming the program and why.
func TestClockNotSteppable(t *testing.T) {
	bin := build(t)
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+bin+" --strategy token-lua", adapterclient.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := chaos.Lookup("client-clock-step")
	if err != nil {
		t.Fatal(err)
	}
	in := st.Info()
	ok, why := sc.AppliesTo(in)
	if in.ClientClock.Steppable || ok || !strings.Contains(why, "is a Go program") || !strings.Contains(why, filepath.Base(bin)) {
		t.Errorf("client-clock-step on the Go adapter: applies %v, %q (clock %+v); want n/a naming the program as a Go program", ok, why, in.ClientClock)
	}
}

// TestPauseStopsRenewal: watchdog served by this adapter renews in the
// adapter's own goroutine; Pause stops the whole process (state T), so the
// key expires and, after Resume, the adapter reports the lease lost.
func TestPauseStopsRenewal(t *testing.T) {
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+bin+" --strategy watchdog", adapterclient.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ttl := 200 * time.Millisecond
	l, err := st.New(impl.Config{Endpoints: []string{addr}, TTL: ttl, Owner: "c0"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl) // renewal keeps it
	select {
	case <-lease.Lost:
		t.Fatal("lost before the pause")
	default:
	}
	proc := l.(adapterclient.ClientProcess)
	if err := proc.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)
	if err := proc.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Lost:
	case <-time.After(2 * time.Second):
		t.Fatal("no lost event within 2s of the resume: the pause did not stop the renewal")
	}
	if _, err := l.Release(ctx, lease); !errors.Is(err, impl.ErrNotHeld) {
		t.Errorf("Release after the pause: %v, want impl.ErrNotHeld", err)
	}
}

// TestCrashBetweenScenario runs the crash-between scenario on naive served
// by this adapter, which declares the crash point after-setnx: lockbench
// asks the adapter to crash there and it exits (the adapters' log says
// so); the history records the acquire in flight as unknown (info), then
// the crash at after-setnx, as the in-process run records it; and both
// find the deadlock (the key left without a TTL blocks every other client)
// and agree on the checks both had the evidence for.
func TestCrashBetweenScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	out := t.TempDir()
	w := workload.Config{Clients: 4, TTL: 200 * time.Millisecond, Duration: 2 * time.Second}
	var vs []results.Verdict
	for _, st := range []string{"naive", adapterclient.ExecPrefix + bin + " --strategy naive"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		r, err := bench.Run(ctx, bench.Spec{Strategy: st, Scenario: "crash-between", Seed: 1, Workload: w, OutDir: out})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		vs = append(vs, r.Verdict)
		hist := filepath.Join(out, r.History)
		h, ops, err := history.Load(hist)
		if err != nil {
			t.Fatal(err)
		}
		if h.Incomplete != "" {
			t.Errorf("%s: history marked incomplete: %s", st, h.Incomplete)
		}
		crashes, inflight := 0, 0
		for i, op := range ops {
			if op.Kind != history.Crash {
				continue
			}
			crashes++
			if op.Note != string(impl.PointAfterSetNX) || op.Hold != 0 {
				t.Errorf("%s: crash %+v, want one at %s outside any hold", st, op, impl.PointAfterSetNX)
			}
			for _, prev := range ops[:i] {
				if prev.Client == op.Client && prev.Kind == history.Acquire && prev.Result == history.Info &&
					strings.Contains(prev.Error, "crashed at after-setnx") {
					inflight++
				}
			}
		}
		if crashes != 1 || inflight != 1 {
			t.Errorf("%s: %d crash operations and %d unknown acquires of the crashed client, want 1 and 1", st, crashes, inflight)
		}
		if adapterclient.IsExec(st) {
			log, err := os.ReadFile(strings.TrimSuffix(hist, filepath.Ext(hist)) + ".adapter.log")
			if err != nil || !strings.Contains(string(log), "exited at point after-setnx as asked") {
				t.Errorf("adapter log (%v) does not say the adapter exited at after-setnx as asked:\n%s", err, log)
			}
		}
	}
	// The key left without a TTL is a deadlock both ways; the other
	// checks agree unless one side lacked evidence (a busy machine).
	exp, _ := verdicts.Expected("naive", "crash-between")
	inconclusive, _, mismatch := compareVerdicts(vs[0], vs[1], exp)
	if vs[0].Liveness != "violated" || vs[1].Liveness != "violated" || len(mismatch) > 0 {
		t.Errorf("in-process %+v, through the adapter %+v: want liveness violated both ways and no other difference (%v)", vs[0], vs[1], mismatch)
	}
	if len(inconclusive) > 0 {
		t.Logf("inconclusive, not compared: %v", inconclusive)
	}
}
