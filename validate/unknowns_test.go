package validate

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
)

// unknownAcquire is a client's outermost acquire with an unknown outcome
// that took d and failed with err, invoked at t (ms).
func unknownAcquire(client int, t, d time.Duration, err string) history.Operation {
	return history.Operation{Client: client, Kind: history.Acquire, Key: "k0", Depth: 1, Invoke: int64(t), Complete: int64(t + d), Result: history.Info, Error: err}
}

const refused = "dial tcp 127.0.0.1:40001: connect: connection refused"

// TestUnknownsOf: unknown outcomes are classified by their duration
// against the call budget (500 ms): the lock's own answers well inside it
// (a timeout of its own, or another error, the most frequent named), the
// ones that took it, and the ones that came back past it with by how
// much; per-node calls, nested acquires, the probe and answered calls are
// left out.
func TestUnknownsOf(t *testing.T) {
	ms := time.Millisecond
	ops := []history.Operation{
		unknownAcquire(0, 0, 2*ms, refused), unknownAcquire(1, 0, 3*ms, refused), unknownAcquire(2, 0, 1*ms, "EOF"),
		unknownAcquire(3, 0, 6*ms, "context deadline exceeded"),
		unknownAcquire(4, 0, 501*ms, "context deadline exceeded"), unknownAcquire(5, 0, 300*ms, "i/o timeout"),
		unknownAcquire(6, 0, 800*ms, "unknown"), unknownAcquire(7, 0, 900*ms, "unknown"),
		{Client: 0, Kind: history.Acquire, Key: "k0", Node: "n1", Invoke: 0, Complete: int64(ms), Result: history.Info, Error: refused},
		{Client: 0, Kind: history.Acquire, Key: "k0", Depth: 2, Invoke: 0, Complete: int64(ms), Result: history.Info, Error: refused},
		{Client: -1, Kind: history.Acquire, Key: "k0", Invoke: 0, Complete: int64(ms), Result: history.Info, Error: refused},
		{Client: 0, Kind: history.Acquire, Key: "k0", Depth: 1, Invoke: 0, Complete: int64(ms), Result: history.Fail, Error: "taken"},
	}
	u := UnknownsOf(ops, 500*ms)
	want := Unknowns{Budget: 500 * ms, Calls: 8, OwnTimeouts: 1, OwnErrors: 3, OwnMedian: 3 * ms, TopError: refused, TopErrorCount: 2,
		TookBudget: 2, Overran: 2, MaxOverrun: 400 * ms, MedianOverrun: 400 * ms}
	if u != want {
		t.Errorf("UnknownsOf\n got %+v\nwant %+v", u, want)
	}
	if u := UnknownsOf(ops, 0); u.Calls != 8 || len(u.causes("acquire")) != 0 {
		t.Errorf("no budget recorded: %+v, want the count only", u)
	}
	if _, _, ok := UnknownsOf(ops, 0).Explain("acquire"); ok {
		t.Error("no budget recorded: Explain ok, want no explanation (the general hint stays)")
	}
}

// TestUnknownsExplain: the hint names the cause the durations show and the
// fix of the largest group: more time only when the calls took the
// budget; the strategy's own timeout → a longer --ttl; the lock's own
// answers (with the error) and overruns of the deadline (with the
// figures) → no flag.
func TestUnknownsExplain(t *testing.T) {
	ms := time.Millisecond
	many := func(n int, d time.Duration, err string) []history.Operation {
		var out []history.Operation
		for i := range n {
			out = append(out, unknownAcquire(i, time.Duration(i)*ms, d, err))
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		ops      []history.Operation
		text     []string // parts of the text, in order
		fix      string
		notInFix string
	}{
		{"the lock's own answers", append(many(30, 2*ms, refused), many(2, 500*ms, "context deadline exceeded")...),
			[]string{`30 acquires answered unknown by the lock itself after a median of 2ms, well inside the 500ms call budget: its own answers, most often “` + refused + `” (30)`,
				"2 acquires took the whole 500ms call budget"}, "", "more time"},
		{"the budget decided", append(many(30, 502*ms, "context deadline exceeded"), many(2, 2*ms, refused)...),
			[]string{"2 acquires answered unknown by the lock itself", "30 acquires took the whole 500ms call budget"}, fixTimeouts, ""},
		{"the strategy's own timeout", many(20, 5*ms, "redsync: node #0: context deadline exceeded"),
			[]string{"20 acquires timed out inside the lock after a median of 5ms, well inside the 500ms call budget (the strategy's own timeout)"}, fixOwnBudget, "--op-timeout or"},
		{"the lock overran its deadline", append(many(5, 1200*ms, "unknown"), many(1, 700*ms, "unknown")...),
			[]string{"6 acquires returned past the 500ms deadline, by up to 700ms (median 700ms): the lock overran its deadline"}, "", "more time"},
		{"a late return within the slack took the budget", many(5, 540*ms, "context deadline exceeded"),
			[]string{"5 acquires took the whole 500ms call budget"}, fixTimeouts, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, fix, ok := UnknownsOf(tt.ops, 500*ms).Explain("acquire")
			if !ok {
				t.Fatal("no explanation")
			}
			at := 0
			for _, p := range tt.text {
				i := strings.Index(text[at:], p)
				if i < 0 {
					t.Fatalf("text %q\nlacks (in order) %q", text, p)
				}
				at += i + len(p)
			}
			if fix != tt.fix || tt.notInFix != "" && strings.Contains(fix, tt.notInFix) {
				t.Errorf("fix %q, want %q", fix, tt.fix)
			}
		})
	}
}

// TestHintsFromDurations: judged through Fill, a run whose unknown
// outcomes are a refused connection answered in milliseconds (a node down
// under node-restart-delayed, measured: 532 of 829 acquires, exit 4 with
// "give the calls more time") names the lock's own error and no longer
// sends the user to --ttl or --op-timeout, in the missing evidence and in
// the liveness finding; the same history with the calls taking the whole
// budget keeps that hint; one whose calls overran their deadline says so
// with the figures.
func TestHintsFromDurations(t *testing.T) {
	ms := time.Millisecond
	run := func(d time.Duration, err string) []history.Operation {
		var ops []history.Operation
		for i := range 40 { // 40 unknown acquires, 4 grants: a starved run
			ops = append(ops, unknownAcquire(i%8, time.Duration(i)*10*ms, d, err))
		}
		for i := range 4 {
			at := int64(time.Second) + int64(i)*int64(100*ms)
			ops = append(ops,
				history.Operation{Client: i, Kind: history.Acquire, Key: "k0", Depth: 1, Token: "t", Invoke: at, Complete: at + int64(ms), Result: history.OK},
				history.Operation{Client: i, Kind: history.Read, Key: "k0", Invoke: at + int64(2*ms), Complete: at + int64(3*ms), Result: history.OK},
				history.Operation{Client: i, Kind: history.Write, Key: "k0", Invoke: at + int64(4*ms), Complete: at + int64(5*ms), Result: history.OK, Value: int64(i + 1), Prev: int64(i)},
				history.Operation{Client: i, Kind: history.Release, Key: "k0", Depth: 1, Token: "t", Invoke: at + int64(6*ms), Complete: at + int64(7*ms), Result: history.OK})
		}
		return ops
	}
	for _, tt := range []struct {
		name, err     string
		d             time.Duration
		what, finding string
		fixHas        string // "" : the fix must not send to more time
	}{
		{"refused connections", refused, 2 * ms, `of which 40 acquires answered unknown by the lock itself after a median of 2ms, well inside the 500ms call budget: its own answers, most often “` + refused + `” (40)`,
			"40 acquires answered unknown by the lock itself", ""},
		{"the whole budget", "context deadline exceeded", 500 * ms, "of which 40 acquires took the whole 500ms call budget", "40 acquires took the whole 500ms call budget", fixTimeouts},
		{"overruns", "unknown", 900 * ms, "of which 40 acquires returned past the 500ms deadline, by up to 400ms (median 400ms): the lock overran its deadline",
			"the lock overran its deadline", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ops := run(tt.d, tt.err)
			h := history.Header{Strategy: "token-lua", Scenario: "baseline", Clients: 8, Keys: 1, TTLMs: 100, OpTimeoutMs: 500}
			rep := checker.Check(h, ops, checker.Options{})
			r := results.Run{Strategy: h.Strategy, Scenario: h.Scenario, Config: results.RunConfig{Clients: h.Clients, OpTimeoutMs: float64(h.OpTimeoutMs)}}
			Fill(&r, ops, rep, verdicts.For(h.Strategy, h.Scenario, ""), t.TempDir())
			m := r.Missing["exclusion"]
			if !strings.Contains(m.What, tt.what) {
				t.Errorf("missing evidence\n %q\nwant it to contain\n %q", m.What, tt.what)
			}
			if !strings.Contains(r.LivenessFinding, tt.finding) {
				t.Errorf("liveness finding %q, want it to contain %q", r.LivenessFinding, tt.finding)
			}
			if tt.fixHas == "" && (strings.Contains(m.Fix, "more time") || strings.Contains(m.Fix, "--op-timeout")) {
				t.Errorf("fix %q sends the user to more time, though the calls did not take it", m.Fix)
			}
			if tt.fixHas != "" && !strings.Contains(m.Fix, tt.fixHas) {
				t.Errorf("fix %q, want %q", m.Fix, tt.fixHas)
			}
		})
	}
}

// TestLowEvidenceRecordingsWithBudget: the recorded redsync run at TTL 50
// ms (714 of 719 acquires unknown) judged with its 500 ms call budget:
// its unknowns came back in a median of ~15 ms with redsync's own timeout
// (0.05×TTL), so the hint is a longer --ttl, not --op-timeout.
func TestLowEvidenceRecordingsWithBudget(t *testing.T) {
	h, ops, err := history.Load(filepath.Join("..", "checker", "testdata", "redsync-gc-pause-ttl50ms-one-grant.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep := checker.Check(h, ops, checker.Options{})
	r := results.Run{Strategy: h.Strategy, Scenario: h.Scenario, Config: results.RunConfig{Clients: h.Clients, OpTimeoutMs: 500}}
	Fill(&r, ops, rep, verdicts.For(h.Strategy, h.Scenario, h.NotGated), t.TempDir())
	m := r.Missing["exclusion"]
	if !strings.Contains(m.What, "712 acquires timed out inside the lock") || !strings.Contains(m.Fix, fixOwnBudget) {
		t.Errorf("missing evidence %q, want the strategy's own timeout and %q", m, fixOwnBudget)
	}
}
