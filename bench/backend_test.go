package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
	"github.com/lockbench/lockbench/workload"
)

// faultNotes returns the notes of a run's nemesis windows (≥ 1 ms).
func faultNotes(t *testing.T, out, hist string) []string {
	t.Helper()
	_, ops, err := history.Load(filepath.Join(out, hist))
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, op := range ops {
		if op.Kind == history.Nemesis && op.Complete-op.Invoke >= int64(time.Millisecond) {
			notes = append(notes, op.Note)
		}
	}
	return notes
}

// TestDockerVerdicts runs the baseline and one canary per fault kind on
// the docker backend (kill: token-lua/node-restart; pause: set-nx-px/
// node-pause through the cgroup freezer; network cut: token-lua/
// partition-holder through the host's proxies) and checks each gives the
// verdict the table expects, the one the process backend gives (the
// matrix and process tests gate that), with the fault's evidence in the
// history, and that no container or network is left after each run.
func TestDockerVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := dockerd.Available(ctx); err != nil {
		t.Skipf("docker backend test skipped: no Docker daemon answers: %v", err)
	}
	if err := dockerd.BuildImage(ctx, dockerd.LocalImage, false); err != nil {
		t.Fatal(err)
	}
	_, vols, err := dockerd.Objects(ctx, dockerd.PIDLabel(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		strategy, scenario string
		note               string // regexp every fault note must match ("" for the baseline)
	}{
		{"token-lua", "baseline", ""},
		{"token-lua", "node-restart", `n1 pid \d+ SIGKILLed \(gone: no live pid \d+ in /proc\).*restarted empty`},
		{"set-nx-px", "node-pause", `n1 pid \d+ SIGSTOPped: state T for \d+ms, then SIGCONT: state [RSD]`},
		{"token-lua", "partition-holder", `.`},
	}
	out := t.TempDir()
	o := cluster.Options{Backend: cluster.BackendDocker, Image: dockerd.LocalImage}
	for _, tt := range tests {
		t.Run(tt.strategy+"_"+tt.scenario, func(t *testing.T) {
			w := workload.Config{Clients: 8, TTL: 50 * time.Millisecond, Duration: 400 * time.Millisecond}
			r, err := Run(ctx, Spec{Strategy: tt.strategy, Scenario: tt.scenario, Seed: 1, Workload: w, OutDir: out, Cluster: o})
			if err == nil && !r.AsExpected && faultMissed(t, r, out) {
				t.Logf("the fault did not land (%v); running the seed again once", r.Unexpected)
				r, err = Run(ctx, Spec{Strategy: tt.strategy, Scenario: tt.scenario, Seed: 1, Workload: w, OutDir: out, Cluster: o})
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := verdicts.For(tt.strategy, tt.scenario, "").Summary(); r.Expected != want {
				t.Errorf("expected %q, table says %q", r.Expected, want)
			}
			switch r.Outcome() {
			case results.OutcomeUnexpected:
				t.Errorf("%s/%s on docker: %v (verdict %+v); faults: %q", tt.strategy, tt.scenario, r.Unexpected, r.Verdict, faultNotes(t, out, r.History))
			case results.OutcomeInconclusive: // too little evidence is no failure; the fault's notes are checked below
				t.Logf("%s/%s on docker: inconclusive: %v", tt.strategy, tt.scenario, r.Inconclusive)
			}
			if r.Config.Backend != cluster.BackendDocker || r.Config.Image != dockerd.LocalImage {
				t.Errorf("results config backend %q image %q", r.Config.Backend, r.Config.Image)
			}
			notes := faultNotes(t, out, r.History)
			if tt.note != "" && len(notes) == 0 {
				t.Fatal("no fault window recorded")
			}
			for _, n := range notes {
				if !regexp.MustCompile(tt.note).MatchString(n) {
					t.Errorf("note %q does not match %q", n, tt.note)
				}
			}
			objs, v, err := dockerd.Objects(ctx, dockerd.PIDLabel(os.Getpid()))
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) > 0 || v > vols {
				t.Errorf("left after the run: %v, dangling volumes %d (before %d)", objs, v, vols)
			}
		})
	}
}

// TestExternalBackend points the external backend at a redis-server the
// test starts (process backend): the baseline holds, node-pause through
// DEBUG SLEEP gives the verdicts the table expects for SIGSTOP, node-pause
// is refused without --allow-destructive, and keys outside lockbench's
// prefix are untouched.
func TestExternalBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	rc := redis.NewClient(&redis.Options{Addr: c.Addrs()[0]})
	defer rc.Close()
	if err := rc.Set(ctx, "app:user:1", "alice", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ext := cluster.External{Addrs: c.Addrs()}
	o := cluster.Options{Backend: cluster.BackendExternal, External: ext}
	w := workload.Config{Clients: 8, TTL: 50 * time.Millisecond, Duration: 400 * time.Millisecond, KeyPrefix: "lockbench-test:"}
	out := t.TempDir()

	_, err = Run(ctx, Spec{Strategy: "set-nx-px", Scenario: "node-pause", Seed: 1, Workload: w, OutDir: out, Cluster: o})
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), cluster.AllowDestructiveFlag) {
		t.Fatalf("node-pause without %s: err %v, want a usage error naming the flag", cluster.AllowDestructiveFlag, err)
	}
	for _, sc := range []string{"node-restart", "clock-jump"} {
		if _, err := Run(ctx, Spec{Strategy: "token-lua", Scenario: sc, Seed: 1, Workload: w, OutDir: out, Cluster: o}); !errors.Is(err, errs.ErrUsage) {
			t.Errorf("%s on external: err %v, want a usage error", sc, err)
		}
	}

	o.External.AllowDestructive = true
	tests := []struct {
		strategy, scenario string
		note               string
	}{
		{"token-lua", "baseline", ""},
		{"set-nx-px", "node-pause", `node-pause: n1 DEBUG SLEEP 100ms \(external backend\)`},
		{"token-lua", "node-pause", `node-pause: n1 DEBUG SLEEP 100ms \(external backend\)`},
	}
	for _, tt := range tests {
		t.Run(tt.strategy+"_"+tt.scenario, func(t *testing.T) {
			r, err := Run(ctx, Spec{Strategy: tt.strategy, Scenario: tt.scenario, Seed: 1, Workload: w, OutDir: out, Cluster: o})
			if err != nil {
				t.Fatal(err)
			}
			switch r.Outcome() {
			case results.OutcomeUnexpected:
				t.Errorf("%s/%s on external: %v (verdict %+v)", tt.strategy, tt.scenario, r.Unexpected, r.Verdict)
			case results.OutcomeInconclusive: // too little evidence is no failure; the fault's notes are checked below
				t.Logf("%s/%s on external: inconclusive: %v", tt.strategy, tt.scenario, r.Inconclusive)
			}
			if r.Config.Backend != cluster.BackendExternal {
				t.Errorf("results config backend %q", r.Config.Backend)
			}
			notes := faultNotes(t, out, r.History)
			if tt.note != "" && len(notes) == 0 {
				t.Fatal("no fault window recorded")
			}
			for _, n := range notes {
				if !regexp.MustCompile(tt.note).MatchString(n) {
					t.Errorf("note %q does not match %q", n, tt.note)
				}
			}
		})
	}
	if !c.Nodes()[0].Running() {
		t.Fatal("the external server was stopped")
	}
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k != "app:user:1" && !strings.HasPrefix(k, w.KeyPrefix) {
			t.Errorf("key %q outside lockbench's prefix %q", k, w.KeyPrefix)
		}
	}
	if v, err := rc.Get(ctx, "app:user:1").Result(); err != nil || v != "alice" {
		t.Errorf("the user's key: %q, %v; want alice", v, err)
	}
	if left, err := rc.Keys(ctx, w.KeyPrefix+"*").Result(); err != nil || len(left) > 0 {
		t.Errorf("keys under %q left after the runs: %v (%v); each run deletes its own", w.KeyPrefix, left, err)
	}
	// A key under the prefix that no run of this test wrote refuses the
	// next run before it starts, naming it, and stays.
	if err := rc.Set(ctx, w.KeyPrefix+"k0", "someone", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, Spec{Strategy: "token-lua", Scenario: "baseline", Seed: 1, Workload: w, OutDir: out, Cluster: o})
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), `1 keys under "lockbench-test:" already exist on `+c.Addrs()[0]+" (e.g. lockbench-test:k0)") {
		t.Errorf("run over a stale key: err %v, want a usage error naming it", err)
	}
	if v, _ := rc.Get(ctx, w.KeyPrefix+"k0").Result(); v != "someone" {
		t.Errorf("the stale key was changed to %q", v)
	}
}

// TestExternalUnreachableLeavesNoHistories: a run whose external server
// does not answer fails with an environment error before it makes the
// histories folder.
func TestExternalUnreachableLeavesNoHistories(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := t.TempDir()
	o := cluster.Options{Backend: cluster.BackendExternal, External: cluster.External{Addrs: []string{"127.0.0.1:1"}}}
	w := workload.Config{Clients: 2, TTL: 50 * time.Millisecond, Duration: 100 * time.Millisecond}
	_, err := Run(ctx, Spec{Strategy: "token-lua", Scenario: "baseline", Seed: 1, Workload: w, OutDir: out, Cluster: o})
	if !errors.Is(err, cluster.ErrEnvironment) {
		t.Fatalf("err %v, want an environment error", err)
	}
	if _, err := os.Stat(filepath.Join(out, "histories")); err == nil {
		t.Errorf("a run that could not start left %s", filepath.Join(out, "histories"))
	}
}
