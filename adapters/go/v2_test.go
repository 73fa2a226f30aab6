package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/workload"
)

// execOf looks the adapter up with flags, not cached.
func execOf(t *testing.T, bin, flags string) impl.Strategy {
	t.Helper()
	st, err := adapterclient.Exec(context.Background(), adapterclient.ExecPrefix+bin+" "+flags, adapterclient.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestV2Calls: protocol 2 through this adapter, call by call: a failed
// acquire states reason taken and the token it tried; a release after
// another owner took the key says taken, after expiry expired; check
// answers valid for a held lease and not valid once its validity passed;
// an extend moves the lease's validity (Lease.ValidUntil) past the grant's.
func TestV2Calls(t *testing.T) {
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st := execOf(t, bin, "--strategy token-lua --check --extend --validity")
	in := st.Info()
	if !in.Claims.Renewal || !in.Claims.Validity || !in.Policy.AskLock || !in.Policy.CheckValidity {
		t.Fatalf("Info %+v: want renewal and validity claimed, ask-lock and check-validity by default", in)
	}
	ttl := 300 * time.Millisecond
	cfg := impl.Config{Endpoints: []string{addr}, TTL: ttl, Owner: "a", RenewEvery: time.Hour} // lockbench's renewals off: the test extends
	a, err := st.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cfg.Owner = "b"
	b, err := st.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	la, err := a.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if la.Validity.IsZero() || !la.ValidUntil().Equal(la.Validity) {
		t.Fatalf("grant validity %v / %v: want one, not moved yet", la.Validity, la.ValidUntil())
	}
	_, err = b.Acquire(ctx, "k")
	if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonTaken || impl.TriedToken(err) == "" || impl.TriedToken(err) == la.Token {
		t.Errorf("b.Acquire while a holds: %v, reason %q, token %q: want fail, taken, b's own token", err, impl.Reason(err), impl.TriedToken(err))
	}
	if valid, err := a.(impl.Checker).Check(ctx, la); err != nil || !valid {
		t.Errorf("Check of a held lease: %v, %v; want valid", valid, err)
	}
	time.Sleep(ttl / 2)
	if err := a.(impl.Extender).Extend(ctx, la); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if !la.ValidUntil().After(la.Validity.Add(ttl / 4)) {
		t.Errorf("after an extend at TTL/2: valid until %v, grant's %v: want it moved by about TTL/2", la.ValidUntil(), la.Validity)
	}
	time.Sleep(ttl + ttl/2) // past the extended validity: the key expired
	if valid, err := a.(impl.Checker).Check(ctx, la); err != nil || valid {
		t.Errorf("Check after the validity passed: %v, %v; want not valid", valid, err)
	}
	_, err = a.Release(ctx, la)
	if !errors.Is(err, impl.ErrNotHeld) || impl.Reason(err) != impl.ReasonExpired {
		t.Errorf("Release after expiry: %v, reason %q; want fail, expired", err, impl.Reason(err))
	}
	la, err = a.Acquire(ctx, "k2")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + ttl/5)
	lb, err := b.Acquire(ctx, "k2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err = a.Release(ctx, la); !errors.Is(err, impl.ErrNotHeld) || impl.Reason(err) != impl.ReasonTaken {
		t.Errorf("Release after another owner took the key: %v, reason %q; want fail, taken", err, impl.Reason(err))
	}
	if _, err := b.Release(ctx, lb); err != nil {
		t.Errorf("b.Release: %v", err)
	}
}

// runOps runs a workload of st against the redis-server at addr and
// returns its history.
func runOps(t *testing.T, st impl.Strategy, addr string, cfg workload.Config) []history.Operation {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.jsonl")
	hw, err := history.Create(path, history.Header{Strategy: st.Name(), Scenario: "test", TTLMs: cfg.TTL.Milliseconds(), Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	env := workload.Env{Strategy: st, Endpoints: func(int) []string { return []string{addr} },
		History: hw, Clock: history.NewClock(), IDs: &history.IDs{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := workload.Run(ctx, cfg, env); err != nil {
		t.Fatal(err)
	}
	if err := hw.Close(); err != nil {
		t.Fatal(err)
	}
	_, ops, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestCheckPolicy: under Policy.AskLock the client asks the adapter before
// every write and writes only on a valid answer: with critical sections of
// either TTL/10 or 2×TTL and the adapter's own view of validity, each
// write's hold has a check that said valid, each check that said not valid
// ends its hold without a write, and both answers occur.
func TestCheckPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st := execOf(t, bin, "--strategy token-lua --check --validity")
	ttl := 100 * time.Millisecond
	ops := runOps(t, st, addr, workload.Config{Clients: 2, TTL: ttl, Duration: 1500 * time.Millisecond, Seed: 1,
		CS: workload.CSDist{Min: ttl / 10, TailShare: 0.5, Tail: 2 * ttl}, Policy: impl.Policy{AskLock: true}})
	said := map[int64]int64{} // hold → the check's value (+1: 1 valid, 0 not)
	var valid, invalid int
	for _, op := range ops {
		if op.Kind != history.Check {
			continue
		}
		if op.Result != history.OK || op.Hold == 0 || op.Token == "" {
			t.Errorf("check %+v: want ok, in a hold, naming the lease's token", op)
		}
		said[op.Hold] = op.Value + 1
		if op.Value == 1 {
			valid++
		} else {
			invalid++
		}
	}
	for _, op := range ops {
		if op.Kind == history.Write && said[op.Hold] != 2 {
			t.Errorf("write %+v in a hold whose check said %d (want 1: valid)", op, said[op.Hold]-1)
		}
	}
	if valid == 0 || invalid == 0 {
		t.Errorf("%d checks said valid and %d not: want both (short and 2×TTL critical sections)", valid, invalid)
	}
}

// TestExtendValidity: an adapter that claims renewal and validity and
// states validity_ms on its extend replies keeps its leases through
// critical sections of 3×TTL: lockbench moves each lease's validity with
// every extend (recorded as the extend's valid_until_ns), so the validity
// check lets the write through after the grant's own validity passed.
func TestExtendValidity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st := execOf(t, bin, "--strategy token-lua --extend --validity")
	ttl := 150 * time.Millisecond
	ops := runOps(t, st, addr, workload.Config{Clients: 2, TTL: ttl, Duration: 1500 * time.Millisecond, Seed: 1,
		CS: workload.CSDist{Min: 3 * ttl}, Policy: st.Info().Policy})
	grantValid := map[int64]int64{}
	var extends, late int
	for _, op := range ops {
		switch {
		case op.Kind == history.Acquire && op.Result == history.OK:
			grantValid[op.Hold] = op.ValidUntil
		case op.Kind == history.Extend && op.Result == history.OK:
			extends++
			if op.ValidUntil <= op.Complete {
				t.Errorf("extend %+v: want valid_until_ns after its completion", op)
			}
		case op.Kind == history.Write && op.Result == history.OK:
			if op.Invoke > grantValid[op.Hold] {
				late++
			}
		}
	}
	if extends == 0 || late == 0 {
		t.Errorf("%d ok extends, %d writes after their grant's validity: want both (renewed leases used past their first deadline)", extends, late)
	}
}

// cancelExtends is a Faults that cancels every extend lockbench sends
// before it reaches the adapter's Redis call.
type cancelExtends struct{}

func (cancelExtends) At(_ context.Context, ev workload.Event) error {
	if ev.Point == workload.PointBeforeExtend {
		ev.Call.Cancellable().Cancel()
	}
	return nil
}

// TestCancelExtend: the extends lockbench drives, cancelled in flight at
// before-extend, are sent a cancel request; this adapter cancels the
// call's context, answers unknown with reason cancelled (or the real
// outcome when the call won the race) and the run goes on: extends are
// recorded info with reason cancelled, and nothing breaks.
func TestCancelExtend(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st := execOf(t, bin, "--strategy token-lua --extend")
	ttl := 150 * time.Millisecond
	path := filepath.Join(t.TempDir(), "h.jsonl")
	hw, err := history.Create(path, history.Header{Strategy: st.Name(), Scenario: "test", TTLMs: ttl.Milliseconds(), Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	env := workload.Env{Strategy: st, Endpoints: func(int) []string { return []string{addr} },
		History: hw, Clock: history.NewClock(), IDs: &history.IDs{}, Faults: cancelExtends{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := workload.Run(ctx, workload.Config{Clients: 1, TTL: ttl, Duration: time.Second, Seed: 1, CS: workload.CSDist{Min: ttl}}, env); err != nil {
		t.Fatal(err)
	}
	hw.Close()
	_, ops, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := 0
	for _, op := range ops {
		if op.Kind == history.Extend && op.Reason == history.ReasonCancelled {
			cancelled++
			if op.Result != history.Info {
				t.Errorf("cancelled extend %+v: want info", op)
			}
		}
	}
	if cancelled == 0 {
		t.Error("no extend recorded cancelled")
	}
}

// TestThreads: an adapter serving 2 logical clients per process runs 3
// clients of a run in 2 processes (clients 0 and 1 share one); with
// --shared-lock they share one Locker, so reentrant's owner field is the
// same for both and the second client is granted the key the first holds
// (the misuse the flag expresses), where separate Lockers refuse it. A
// crash of one logical client kills its process: its sibling dies with it.
func TestThreads(t *testing.T) {
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, shared := range []bool{false, true} {
		flags := "--strategy reentrant --threads 2"
		if shared {
			flags += " --shared-lock"
		}
		run := adapterclient.ForRun(execOf(t, bin, flags))
		var ls []impl.Locker
		for i := range 3 {
			l, err := run.New(impl.Config{Endpoints: []string{addr}, TTL: time.Second, Owner: "c" + string(rune('0'+i)), Client: i})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ls = append(ls, l)
		}
		pid := func(l impl.Locker) int { return l.(interface{ Pid() int }).Pid() }
		if pid(ls[0]) != pid(ls[1]) || pid(ls[0]) == pid(ls[2]) {
			t.Fatalf("shared %v: pids %d %d %d: want clients 0 and 1 in one process, 2 in another", shared, pid(ls[0]), pid(ls[1]), pid(ls[2]))
		}
		key := fmt.Sprintf("k%v", shared)
		if _, err := ls[0].Acquire(ctx, key); err != nil {
			t.Fatal(err)
		}
		_, err := ls[1].Acquire(ctx, key)
		if shared && err != nil || !shared && !errors.Is(err, impl.ErrNotAcquired) {
			t.Errorf("shared %v: the second client's acquire of a held key: %v (want granted with a shared lock object, refused without)", shared, err)
		}
		if err := ls[0].(adapterclient.ClientProcess).Kill(); err != nil {
			t.Fatal(err)
		}
		dead := func(l impl.Locker) bool { return l.(interface{ Dead() bool }).Dead() }
		if !dead(ls[1]) || dead(ls[2]) {
			t.Errorf("shared %v: after client 0's crash, client 1 dead %v, client 2 dead %v: want its sibling dead, the other process alive", shared, dead(ls[1]), dead(ls[2]))
		}
		if _, err := ls[1].Acquire(ctx, "other"); !errors.Is(err, impl.ErrCrashed) {
			t.Errorf("shared %v: the sibling's call after the crash: %v, want impl.ErrCrashed", shared, err)
		}
	}
}

// TestThreadsRun: a run of 4 clients of an adapter serving 2 logical
// clients per process (watchdog, whose lost events name their client)
// grants every client the key and records no broken adapter.
func TestThreadsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, adapterComm)...)
	bin := build(t)
	addr := startRedis(t)
	st := execOf(t, bin, "--strategy watchdog --threads 2")
	ops := runOps(t, st, addr, workload.Config{Clients: 4, TTL: 100 * time.Millisecond, Duration: 800 * time.Millisecond, Seed: 1})
	granted := map[int]bool{}
	for _, op := range ops {
		if op.Kind == history.Acquire && op.Result == history.OK {
			granted[op.Client] = true
		}
	}
	if len(granted) != 4 {
		t.Errorf("clients granted: %v, want all 4", granted)
	}
}
