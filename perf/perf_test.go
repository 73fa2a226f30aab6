package perf

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
)

func TestStat(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Stat
	}{
		{nil, Stat{}},
		{[]float64{3}, Stat{3, 3, 3}},
		{[]float64{5, 1, 3}, Stat{3, 1, 5}},
		{[]float64{4, 1, 3, 2}, Stat{2.5, 1, 4}},
	} {
		if got := stat(tc.in); got != tc.want {
			t.Errorf("stat(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestRPSLineTakesTheFinalRate(t *testing.T) {
	out := "\rSET k: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)\r" +
		"SET k: rps=19956.2 (overall: 19956.2) avg_msec=0.040 (overall: 0.040)\r" +
		"SET lb:rb:__rand_int__ value NX PX 30000: 20222.45 requests per second, p50=0.039 msec\n"
	m := rpsLine.FindAllStringSubmatch(out, -1)
	if len(m) != 1 || m[0][1] != "20222.45" {
		t.Fatalf("matches %q, want the one final rate 20222.45", m)
	}
}

// TestRunSmall runs a tiny comparison (2 clients, 1 round) and checks that
// both tools were measured, the server's counts agree with lockbench's
// grants (SET + DEL per grant) and the results runs carry the figures.
func TestRunSmall(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not installed (apt-get install redis-tools)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Run(ctx, Options{Clients: []int{2}, Requests: 2000, Repeat: 1, Check: true, OutDir: t.TempDir(), CheckerOps: 5000, CheckerRounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Comparisons) != 1 || len(r.Comparisons[0].Rounds) != 1 {
		t.Fatalf("comparisons %+v", r.Comparisons)
	}
	rd := r.Comparisons[0].Rounds[0]
	for _, m := range rd {
		if m.CommandsPerS <= 0 || m.ServerCPU <= 0 {
			t.Errorf("%s: %.0f commands/s, server CPU %.2f: want both positive", m.Tool, m.CommandsPerS, m.ServerCPU)
		}
	}
	if rb := rd[0]; rb.Commands < 2000 {
		t.Errorf("redis-benchmark: the server counted %d commands, want at least the 2000 sent", rb.Commands)
	}
	for _, m := range rd[1:] {
		// Each hold (or loop turn) is SET then DEL; a run may end between the two.
		if d := m.Commands - 2*int64(m.Grants); d < 0 || d > 2 {
			t.Errorf("%s: %d commands for %d grants, want 2 per grant", m.Tool, m.Commands, m.Grants)
		}
	}
	if rd[1].Check != "exclusion ok, resource ok" {
		t.Errorf("check of the recorded history: %q", rd[1].Check)
	}
	if rd[3].Tool != "go-redis-loop" || rd[3].ClientCPU <= 0 {
		t.Errorf("go-redis loop: %+v", rd[3])
	}
	// The three ratios: structure only (their values are the machine's).
	if c := r.Ratios.Checker; c == nil || c.Ops < 5000 || c.OpsPerCPUS.N != 2 || c.OpsPerS.N != 2 || len(c.CPUS) != 2 {
		t.Errorf("checker measure: %+v", c)
	}
	if r.Ratios.Clients != 2 || r.Ratios.ClientCPU.N != 1 || r.Ratios.RecordingCPU.N != 1 {
		t.Errorf("client ratios: %+v", r.Ratios)
	}
	var out strings.Builder
	r.Print(&out)
	for _, want := range []string{"ops per CPU-second", "lockbench (recording) / go-redis loop, 2 clients", "recording cost, client CPU per command"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report names no %q:\n%s", want, out.String())
		}
	}
	// perf.json holds the report as measured, and reads back.
	dir := t.TempDir()
	if err := Write(dir, &File{Tool: "lockbench test", Strategy: Strategy, Report: r}); err != nil {
		t.Fatal(err)
	}
	f, err := Load(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Report.Comparisons[0].Rounds[0]
	if f.SchemaVersion != SchemaVersion || got[1].Tool != "lockbench" || got[1].CommandsPerS != rd[1].CommandsPerS || got[1].Check != rd[1].Check || got[3].Tool != "go-redis-loop" {
		t.Errorf("perf.json read back: %+v", f)
	}
}

// TestFileLoad: Load refuses what is not a perf.json of this schema (a
// results.json included) and RemoveEarlier removes a perf.json and the
// histories it lists, nothing else.
func TestFileLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(`{"schema_version":7,"runs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, FileName)); !errors.Is(err, ErrSchema) {
		t.Errorf("Load(schema 7) = %v, want ErrSchema", err)
	}
	hist := filepath.Join("histories", "perf-c1-r1.jsonl")
	other := filepath.Join(dir, "notes.txt")
	for _, p := range []string{filepath.Join(dir, hist), other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Report{Comparisons: []Comparison{{Clients: 1, Rounds: [][4]Measure{{{Tool: "redis-benchmark"}, {Tool: "lockbench", History: hist}}}}}}
	if err := Write(dir, &File{Report: r}); err != nil {
		t.Fatal(err)
	}
	if !In(dir) {
		t.Fatal("In: no perf.json after Write")
	}
	if f, err := RemoveEarlier(dir); err != nil || f == nil {
		t.Fatalf("RemoveEarlier = %v, %v", f, err)
	}
	for _, p := range []string{filepath.Join(dir, FileName), filepath.Join(dir, hist), filepath.Join(dir, "histories")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("RemoveEarlier left %s", p)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("RemoveEarlier removed a file it did not write: %v", err)
	}
}

// TestValidate: Validate refuses options out of range (ErrOptions) and a
// missing redis-server or redis-benchmark (cluster.ErrEnvironment) without
// starting anything.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		o    Options
		want error
	}{
		{"negative sweep duration", Options{OutDir: dir, SweepDuration: -time.Second}, ErrOptions},
		{"negative requests", Options{OutDir: dir, Requests: -1}, ErrOptions},
		{"no folder", Options{}, ErrOptions},
		{"too many clients", Options{OutDir: dir, Clients: []int{10001}}, ErrOptions},
	} {
		if err := tt.o.Validate(); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	t.Setenv("PATH", t.TempDir())
	for _, o := range []Options{{OutDir: dir}, {OutDir: dir, RedisBenchmark: "/bin/true"}} {
		if err := o.Validate(); !errors.Is(err, cluster.ErrEnvironment) || !strings.Contains(err.Error(), "redis-server not found") {
			t.Errorf("no redis-server on PATH: %v, want an environment error naming redis-server", err)
		}
	}
}
