package strategies

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// TestCallBudget: the strategies whose calls must fit a TTL-derived budget
// declare it, at TTL 50 ms, 100 ms and 2 s alike, following a library
// setting; the others declare none.
func TestCallBudget(t *testing.T) {
	tuned := func(name string, set map[string]string, ttl time.Duration) impl.Strategy {
		st, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = Tune(st, set, ttl); err != nil {
			t.Fatal(err)
		}
		return st
	}
	tests := []struct {
		strategy string
		set      map[string]string
		ttl      time.Duration
		ok       bool
		want     time.Duration
		scope    string
	}{
		{"redsync", nil, 100 * time.Millisecond, true, 5 * time.Millisecond, BudgetWholeCall},
		{"redsync", nil, 50 * time.Millisecond, true, 2500 * time.Microsecond, BudgetWholeCall},
		{"redsync", nil, 2 * time.Second, true, 100 * time.Millisecond, BudgetWholeCall},
		{"redsync-single", nil, 100 * time.Millisecond, true, 5 * time.Millisecond, BudgetWholeCall},
		{"redsync", map[string]string{"redsync-timeout-factor": "0.2"}, 100 * time.Millisecond, true, 20 * time.Millisecond, BudgetWholeCall},
		{"redlock", nil, 100 * time.Millisecond, true, 10 * time.Millisecond, BudgetEachNode},
		{"redlock", nil, 20 * time.Millisecond, true, 5 * time.Millisecond, BudgetEachNode}, // at least 5 ms
		{"redlock", nil, 2 * time.Second, true, 200 * time.Millisecond, BudgetEachNode},
		{"redislock", nil, 100 * time.Millisecond, false, 0, ""},
		{"token-lua", nil, 100 * time.Millisecond, false, 0, ""},
		{"watchdog", nil, 100 * time.Millisecond, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.strategy+"/"+tt.ttl.String(), func(t *testing.T) {
			b, ok := BudgetOf(tuned(tt.strategy, tt.set, tt.ttl), tt.ttl)
			if ok != tt.ok || b.Time != tt.want || b.Scope != tt.scope || (ok && b.Rule == "") {
				t.Errorf("BudgetOf = %+v, %v; want %v (%s), %v", b, ok, tt.want, tt.scope, tt.ok)
			}
		})
	}
}
