package verdicts

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// testOnlyLock stands for a strategy a contributor adds: in a real branch
// it is one file in impl/strategies (a Strategy: its Name, its Info with its claims
// and fault points, its Locker) plus one line in strategies.All. It borrows
// token-lua's Info, so its verdict rows can be token-lua's.
type testOnlyLock struct{}

func (testOnlyLock) Name() string { return "test-only-lock" }

func (testOnlyLock) Info() impl.Info {
	st, _ := strategies.Lookup("token-lua")
	in := st.Info()
	in.Summary = "a strategy that exists only in this test"
	return in
}

func (testOnlyLock) New(impl.Config) (impl.Locker, error) {
	return nil, errors.New("test-only-lock is never run")
}

// TestNewStrategyNeedsOnlyItsRows: a strategy added through the registry
// path (strategies.All plus one entry) needs its verdict rows and nothing else.
// Without them the verdict-table check names every missing row, one per
// scenario that applies, and nothing else; with them (a family file of its
// own) the table is complete. The scenarios decide from the strategy's
// Info alone, never from its name: the new strategy gets the same
// applicability, setup, fault features and topology as the registered
// strategy whose Info it shares.
func TestNewStrategyNeedsOnlyItsRows(t *testing.T) {
	registry := append(strategies.All(), testOnlyLock{}) // the one registry line
	name := testOnlyLock{}.Name()

	var want []string
	for _, sc := range chaos.All() {
		if ok, _ := sc.AppliesTo(testOnlyLock{}.Info()); ok {
			want = append(want, name+"/"+sc.Name+" applies but has no verdict row: add one to the strategy's verdicts_*.go file")
		}
	}
	if len(want) == 0 {
		t.Fatal("no scenario applies to the test strategy")
	}
	got := tableProblems(registry, chaos.All(), families())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdict table without the new strategy's rows:\n got: %q\nwant: %q", got, want)
	}

	// Its rows: a family of its own (verdicts_<family>.go in a real branch).
	rows := map[string][]row{name: singleNodeVerdicts()["token-lua"]}
	if got := tableProblems(registry, chaos.All(), append(families(), rows)); len(got) > 0 {
		t.Errorf("verdict table with the new strategy's rows: %q, want no problem", got)
	}

	twin, _ := strategies.Lookup("token-lua")
	for _, sc := range chaos.All() {
		a1, _ := sc.AppliesTo(testOnlyLock{}.Info())
		a2, _ := sc.AppliesTo(twin.Info())
		if a1 != a2 ||
			!reflect.DeepEqual(sc.SetupFor(testOnlyLock{}.Info()), sc.SetupFor(twin.Info())) ||
			!reflect.DeepEqual(sc.Requires(testOnlyLock{}.Info()), sc.Requires(twin.Info())) ||
			sc.TopologyFor(testOnlyLock{}.Info()) != sc.TopologyFor(twin.Info()) {
			t.Errorf("scenario %s treats %s and token-lua apart, though their Info is the same: it must decide from impl.Info, not a strategy's name", sc.Name, name)
		}
	}
}
