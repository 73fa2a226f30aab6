package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
)

// TestCapacityOf checks the peak and the knee of capacity curves: the
// knee is the fewest clients reaching 90% of the peak, and none when only
// the last point does (still rising) or one point was measured.
func TestCapacityOf(t *testing.T) {
	for _, tt := range []struct {
		name             string
		rates            map[int]float64
		peak, knee, text string
	}{
		{"saturates", map[int]float64{1: 100, 4: 390, 16: 1000, 64: 1050, 256: 800}, "1052 [1050, 1055] (n=6) at 64 clients", "16 clients", "1: 102, 4: 392, 16: 1002, 64: 1052, 256: 802"},
		{"still rising", map[int]float64{1: 100, 4: 300, 16: 900}, "902 [900, 905] (n=6) at 16 clients", "not reached (still rising at 16 clients)", "1: 102, 4: 302, 16: 902"},
		{"flat from one client", map[int]float64{1: 100, 4: 95}, "102 [100, 105] (n=6) at 1 client", "1 client", "1: 102, 4: 97.5"},
		{"one point", map[int]float64{1: 100}, "102 [100, 105] (n=6) at 1 client", "not reached (still rising at 1 client)", "1: 102"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var runs []results.Run
			for _, n := range []int{256, 1, 64, 4, 16} { // any order
				if rate, ok := tt.rates[n]; ok {
					runs = append(runs, resultstest.CapacityRun("token-lua", n, rate))
				}
			}
			failed := resultstest.CapacityRun("token-lua", 1024, 1e6)
			failed.Error = "environment"
			caps := figures.CapacityOf(append(runs, failed))
			if len(caps) != 1 || len(caps[0].Points) != len(tt.rates) {
				t.Fatalf("CapacityOf = %+v: want one curve of %d points (the failed run left out)", caps, len(tt.rates))
			}
			c := caps[0]
			if got := peakText(c); !strings.HasPrefix(got, tt.peak) {
				t.Errorf("peak = %q, want it to start with %q", got, tt.peak)
			}
			if got := kneeText(c); got != tt.knee {
				t.Errorf("knee = %q, want %q", got, tt.knee)
			}
			if got := curveText(c); got != tt.text {
				t.Errorf("curve = %q, want %q", got, tt.text)
			}
			if got := cmdsText(c); got != "4.00 server, 2.00 client" {
				t.Errorf("commands = %q, want the server's and the client's", got)
			}
		})
	}
}

// TestCapacityPeakMarks checks the peak's share of linear scaling and its
// busy mark.
func TestCapacityPeakMarks(t *testing.T) {
	one, many := resultstest.CapacityRun("redlock", 1, 100), resultstest.CapacityRun("redlock", 4, 200)
	many.Noise = &noise.Summary{Busy: true}
	c := figures.CapacityOf([]results.Run{one, many})[0]
	if got, want := peakText(c), "BUSY: 202 [200, 205] (n=6) at 4 clients, 49.4% of linear"; got != want {
		t.Errorf("peak = %q, want %q", got, want)
	}
	if got := curveText(c); got != "1: 102, 4: 202 (BUSY)" {
		t.Errorf("curve = %q", got)
	}
}

// TestCostTable checks the like-for-like cost table: overhead from the
// 1-client cost run beside two round trips, handoff from the baseline
// beside one, capacity from every cost run; strategies with nothing are
// left out.
func TestCostTable(t *testing.T) {
	f := resultstest.SampleFile()
	f.Cost = append(f.Cost, resultstest.CapacityRun("token-lua", 4, 600))
	rows := costTable(f, []string{"token-lua", "no-such"})
	if len(rows) == 0 || rows[0].Strategy != "token-lua" {
		t.Fatalf("costTable = %+v, want token-lua first", rows)
	}
	for _, r := range rows {
		if r.Strategy == "no-such" {
			t.Errorf("costTable has a row for a strategy that did not run: %+v", r)
		}
	}
	r := rows[0]
	for _, c := range []struct{ name, got, want string }{
		{"rtts/hold", r.RTTsPerHold, "2.00 [2.00, 2.00] (n=6)"},
		{"hold p50", r.HoldP50Ms, "0.225 [0.2, 0.25] (n=6)"},
		{"hold bound", r.HoldBoundMs, "≥ 0.2"},
		{"handoff p50", r.HandoffP50Ms, "BUSY: 0.75 [0.6, 0.9] (n=18)"},
		{"knee", r.Knee, "not reached (still rising at 4 clients)"},
		{"curve", r.Curve, "1: 150, 4: 602"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}
