package diff

import (
	"context"
	"fmt"
	"testing"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

// TestRunAgainIfOverloaded: a run the machine made meaningless
// (bench.ErrOverloaded) is run again with the same seed, at most
// MaxOverloadedReruns times; any other outcome is kept at once.
func TestRunAgainIfOverloaded(t *testing.T) {
	overloaded := fmt.Errorf("x: %w", bench.ErrOverloaded)
	tests := []struct {
		name      string
		errs      []error // the attempts' errors, in order
		wantRuns  int
		wantAgain int
		wantErr   bool
	}{
		{"ok at once", []error{nil}, 1, 0, false},
		{"overloaded once, then ok", []error{overloaded, nil}, 2, 1, false},
		{"overloaded every time", []error{overloaded, overloaded, overloaded, overloaded}, 1 + MaxOverloadedReruns, MaxOverloadedReruns, true},
		{"environment error: not run again", []error{fmt.Errorf("no redis")}, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			run := func(_ context.Context, s bench.Spec) (results.Run, error) {
				err := tt.errs[n]
				n++
				r := results.Run{Seed: s.Seed}
				if err != nil {
					r.Error = err.Error()
				}
				return r, err
			}
			r, again, err := runAgainIfOverloaded(context.Background(), bench.Spec{Seed: 7}, run)
			if n != tt.wantRuns || len(again) != tt.wantAgain || (err != nil) != tt.wantErr || r.Seed != 7 {
				t.Errorf("%d runs, %d again, err %v, seed %d; want %d runs, %d again, error %v, seed 7", n, len(again), err, r.Seed, tt.wantRuns, tt.wantAgain, tt.wantErr)
			}
		})
	}
}
