package impl_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/adapter"
)

// TestReasonAndToken: what WithReason and WithToken attach, Reason and
// TriedToken read through wrapping, and errors.Is still sees the sentinel.
func TestReasonAndToken(t *testing.T) {
	base := fmt.Errorf("x: acquire %q: %w", "k", impl.ErrNotAcquired)
	err := fmt.Errorf("outer: %w", impl.WithToken(impl.WithReason(base, impl.ReasonTaken), "c0:1"))
	if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonTaken || impl.TriedToken(err) != "c0:1" || err.Error() != "outer: "+base.Error() {
		t.Errorf("%v: Is %v, reason %q, token %q", err, errors.Is(err, impl.ErrNotAcquired), impl.Reason(err), impl.TriedToken(err))
	}
	if impl.Reason(base) != "" || impl.TriedToken(base) != "" || impl.WithReason(nil, impl.ReasonTaken) != nil || impl.WithToken(base, "") != base {
		t.Error("no reason or token where none was attached")
	}
	if r := impl.Reason(fmt.Errorf("gave up: %w", impl.ErrCancelled)); r != impl.ReasonCancelled {
		t.Errorf("Reason of a cancelled call = %q, want cancelled", r)
	}
	// The protocol's list of reasons is the history's.
	if !slices.Equal(adapter.Reasons, history.Reasons) {
		t.Errorf("adapter.Reasons %v != history.Reasons %v", adapter.Reasons, history.Reasons)
	}
}
