package results

import (
	"testing"
)

// TestRunOutcome: unexpected wins over inconclusive; a run marked not as
// expected with no line saying why is unexpected.
func TestRunOutcome(t *testing.T) {
	for _, tt := range []struct {
		r    Run
		want string
	}{
		{Run{AsExpected: true}, OutcomeAsExpected},
		{Run{Unexpected: []string{"x"}}, OutcomeUnexpected},
		{Run{Inconclusive: []string{"y"}}, OutcomeInconclusive},
		{Run{Unexpected: []string{"x"}, Inconclusive: []string{"y"}}, OutcomeUnexpected},
		{Run{}, OutcomeUnexpected},
	} {
		if got := tt.r.Outcome(); got != tt.want {
			t.Errorf("%+v: Outcome %q, want %q", tt.r, got, tt.want)
		}
	}
}

// TestContradictionsInconclusive: an inconclusive check contradicts no
// expectation, a must-hold or a must-break alike.
func TestContradictionsInconclusive(t *testing.T) {
	r := Run{ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "break"},
		Verdict: Verdict{Exclusion: "inconclusive", Resource: "inconclusive", Liveness: "ok"}}
	if c := r.Contradictions(); len(c) != 0 {
		t.Errorf("contradictions %q, want none", c)
	}
}
