package figures

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
	"golang.org/x/perf/benchfmt"
)

// TestBenchTextReadBack writes the bench.txt of a real run (and of a
// failed run and a sweep run beside it) and reads it back with benchfmt,
// as benchstat does: one result per window of each completed run, under a
// name benchstat can slice by strategy and scenario, with the window's
// figures in their units and which direction is better.
func TestBenchTextReadBack(t *testing.T) {
	f, err := results.Load(filepath.Join("testdata", "baseline-run", results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	real := f.Runs[0]
	failed := real
	failed.Strategy, failed.Error = "redlock", "port in use"
	sweep := real
	sweep.Config.Clients = 64
	sweep.Windows = append([]results.Window(nil), real.Windows[:2]...)
	sweep.Windows[1] = results.Window{StartMs: 1, EndMs: 2, Grants: 0, GrantsPerS: 0} // no grant: only a rate
	f.Runs = append(f.Runs, failed)
	f.Sweep = []results.Run{sweep}
	dir := t.TempDir()
	if err := Write(dir, f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, results.BenchText))
	if err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(bytes.NewReader(data), results.BenchText)
	type line struct {
		name   string
		iters  int
		values map[string]float64
	}
	var got []line
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("%s: %v", results.BenchText, rec)
		case *benchfmt.Result:
			if rec.GetConfig("goos") != "linux" || rec.GetConfig("pkg") != BenchTextPkg || rec.GetConfig("cpu") != f.Host.CPUModel {
				t.Errorf("configuration goos %q pkg %q cpu %q", rec.GetConfig("goos"), rec.GetConfig("pkg"), rec.GetConfig("cpu"))
			}
			l := line{name: rec.Name.String(), iters: rec.Iters, values: map[string]float64{}}
			for _, v := range rec.Values {
				l.values[v.Unit] = v.Value
			}
			got = append(got, l)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	base := "Lock/strategy=token-lua/scenario=baseline/clients=4/ttl=100ms"
	var want []line
	values := func(r results.Run, w results.Window) map[string]float64 {
		m := map[string]float64{FigureGrantsPerS: w.GrantsPerS}
		for _, v := range []struct {
			p    *float64
			unit string
		}{{w.AcquireP50Ms, FigureAcquireP50Ms}, {w.AcquireP99Ms, FigureAcquireP99Ms}, {w.CommandsPerGrant, FigureCommandsPerGrant},
			{w.HoldP50Ms, FigureHoldP50Ms}, {w.HoldP99Ms, FigureHoldP99Ms}, {w.HandoffP50Ms, FigureHandoffP50Ms}, {w.HandoffP99Ms, FigureHandoffP99Ms}} {
			if v.p != nil {
				m[v.unit] = *v.p
			}
		}
		if rtt := r.RoundTripMs(); rtt > 0 && w.HoldP50Ms != nil {
			m[FigureRTTsPerHold] = *w.HoldP50Ms / rtt
		}
		return m
	}
	for _, w := range real.Windows {
		want = append(want, line{base, w.Grants, values(real, w)})
	}
	w0 := sweep.Windows[0]
	want = append(want,
		line{strings.Replace(base, "clients=4", "clients=64", 1), w0.Grants, values(sweep, w0)},
		line{strings.Replace(base, "clients=4", "clients=64", 1), 0, map[string]float64{FigureGrantsPerS: 0}})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant\n%+v\nfile:\n%s", got, want, data)
	}
	units := rd.Units()
	for _, u := range []struct {
		unit   string
		better int
	}{{FigureGrantsPerS, 1}, {FigureAcquireP50Ms, -1}, {FigureAcquireP99Ms, -1}, {FigureCommandsPerGrant, -1}, {FigureRTTsPerHold, -1}, {FigureHandoffP50Ms, -1}} {
		if b := units.GetBetter(u.unit); b != u.better {
			t.Errorf("unit %s: better %d, want %d", u.unit, b, u.better)
		}
	}
}

// TestBenchName: names carry the keys benchstat slices by; white space
// and key separators inside a value (an exec: strategy's command) cannot
// break them.
func TestBenchName(t *testing.T) {
	tests := []struct {
		r    results.Run
		want string
	}{
		{results.Run{Strategy: "redsync-single", Scenario: "gc-pause", Config: results.RunConfig{Clients: 16, TTLMs: 100}}, "Lock/strategy=redsync-single/scenario=gc-pause/clients=16/ttl=100ms"},
		{results.Run{Strategy: "token-lua", Scenario: "baseline", Config: results.RunConfig{Clients: 4, Keys: 4, TTLMs: 100}}, "Lock/strategy=token-lua/scenario=baseline/clients=4/ttl=100ms/keys=4"},
		{results.Run{Strategy: "exec:python3 lock.py --x=1/2", Scenario: "baseline", Config: results.RunConfig{Clients: 1, TTLMs: 2000}}, "Lock/strategy=exec:python3_lock.py_--x_1_2/scenario=baseline/clients=1/ttl=2000ms"},
	}
	for _, tt := range tests {
		if got := BenchName(tt.r); got != tt.want {
			t.Errorf("BenchName = %q, want %q", got, tt.want)
		}
	}
}
