package verdicts

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// differs returns how a row's checks differ from the claims-derived
// expectation ("" when they agree): exclusion, resource, liveness,
// fencing and availability during faults.
func differs(row, claims Expectation) string {
	var d []string
	for _, c := range []struct {
		name      string
		row, from string
	}{
		{"exclusion", string(row.Exclusion), string(claims.Exclusion)},
		{"resource", string(row.Resource), string(claims.Resource)},
		{"liveness", string(row.Liveness), string(claims.Liveness)},
		{"fencing", string(row.Fencing), string(claims.Fencing)},
		{"during faults", string(row.DuringFaults), string(claims.DuringFaults)},
	} {
		if c.row != c.from {
			d = append(d, fmt.Sprintf("%s %q, claims say %q", c.name, c.row, c.from))
		}
	}
	return strings.Join(d, ", ")
}

// TestClaimsMatchRows checks the built-in strategies' verdict rows against
// the expectations their claims alone predict (FromClaims): it lists every
// row that differs, and each must be in ClaimsExceptions with a reason;
// every exception must still differ.
func TestClaimsMatchRows(t *testing.T) {
	info := map[string]impl.Info{}
	for _, st := range strategies.All() {
		info[st.Name()] = st.Info()
	}
	seen := map[[2]string]bool{}
	var lines []string
	for _, p := range Matrix() {
		in, ok := info[p.Strategy]
		if !ok {
			continue
		}
		from, ok := FromClaims(in, p.Scenario)
		if !ok {
			t.Errorf("%s under %s: no claims rule covers the scenario", p.Strategy, p.Scenario)
			continue
		}
		d := differs(p.Expectation, from)
		if d == "" {
			continue
		}
		key := [2]string{p.Strategy, p.Scenario}
		seen[key] = true
		why := ClaimsExceptions[key]
		lines = append(lines, fmt.Sprintf("%s × %s: %s; why: %s", p.Strategy, p.Scenario, d, why))
		if strings.TrimSpace(why) == "" {
			t.Errorf("%s under %s differs from its claims (%s) and ClaimsExceptions gives no reason\n  row: %s\n  claims: %s", p.Strategy, p.Scenario, d, p.Reason, from.Reason)
		}
	}
	sort.Strings(lines)
	t.Logf("%d rows differ from their claims-derived expectation:\n%s", len(lines), strings.Join(lines, "\n"))
	for key := range ClaimsExceptions {
		if !seen[key] {
			t.Errorf("ClaimsExceptions lists %s × %s, whose row agrees with its claims (or does not exist): remove it", key[0], key[1])
		}
	}
}

// TestClaimsCoverScenarios: every scenario has a claims rule for a lock
// of each shape the protocol allows (single node, quorum), so an adapter
// gets an expectation wherever the scenario applies.
func TestClaimsCoverScenarios(t *testing.T) {
	// Adapters whose wall clock the shim reaches, so client-clock-step
	// applies too.
	steppable := impl.ClockReach{Steppable: true}
	shapes := []impl.Info{
		{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true}, ClientClock: steppable},
		{Nodes: 5, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Quorum: true, Validity: true}, Policy: impl.Policy{CheckValidity: true}, ClientClock: steppable},
	}
	for _, sc := range chaos.All() {
		for _, in := range shapes {
			if ok, _ := sc.AppliesTo(in); !ok {
				continue
			}
			if e, ok := FromClaims(in, sc.Name); !ok || !strings.HasPrefix(e.Reason, "from its claims: ") {
				t.Errorf("%s, %d node(s): no claims rule (%+v)", sc.Name, in.Nodes, e)
			}
		}
	}
}

// TestFromClaims: the rules the issue names, one lock shape each.
func TestFromClaims(t *testing.T) {
	plain := impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true}}
	renew := impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, Policy: impl.Policy{HonourLost: true}}
	valid := impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Validity: true}, Policy: impl.Policy{CheckValidity: true}}
	fenced := impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Fencing: true}}
	split := impl.Info{Nodes: 1, CrashPoint: "after-set"}
	asks := impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Validity: true}, Policy: impl.Policy{AskLock: true}}
	for _, tt := range []struct {
		name     string
		in       impl.Info
		scenario string
		want     string // Summary()
		resource Expect
	}{
		{"no renewal: long-cs must break", plain, "long-cs", "must-break", Break},
		{"renewal: long-cs must hold", renew, "long-cs", "must-hold", Hold},
		{"validity checked: partition-holder must hold", valid, "partition-holder", "must-hold", Hold},
		{"no fencing: gc-pause breaks the resource", plain, "gc-pause", "must-break", Break},
		{"fencing: gc-pause leaves the resource safe", fenced, "gc-pause", "must-break", Hold},
		{"key and TTL apart: crash-between deadlocks", split, "crash-between", "must-break", Hold},
		{"token release: a paused node is safe", plain, "node-pause", "must-hold", Hold},
		{"nothing checked: a client clock step breaks as a long critical section", plain, "client-clock-step", "must-break", Break},
		{"the lock asked before the write: a client clock step must not fool it", asks, "client-clock-step", "must-hold", Hold},
		{"validity checked by lockbench: a client clock step cannot reach it", valid, "client-clock-step", "must-hold", Hold},
		{"fencing: a client clock step leaves the resource safe", fenced, "client-clock-step", "must-break", Hold},
	} {
		e, ok := FromClaims(tt.in, tt.scenario)
		if !ok || e.Summary() != tt.want || e.Resource != tt.resource || !strings.HasPrefix(e.Reason, "from its claims: ") {
			t.Errorf("%s: %+v (ok %v), want %s with resource %s", tt.name, e, ok, tt.want, tt.resource)
		}
	}
}
