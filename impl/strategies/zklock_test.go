package strategies

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestZKLost: zk-lost selects when a zk-lock lease counts as lost: on
// session expiry only (the default), or also when the connection drops
// (disconnected); a reconnect gives later leases a fresh signal. Bad
// values are refused with the valid ones named.
func TestZKLost(t *testing.T) {
	for _, name := range []string{"zk-lock", "zk-fenced"} {
		st, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.(Tunable).Settings()["zk-lost"]; got != zkLostExpired {
			t.Errorf("%s: default zk-lost %q, want %q", name, got, zkLostExpired)
		}
		tuned, err := Tune(st, map[string]string{"zk-lost": zkLostDisconnected}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := tuned.(Tunable).Settings()["zk-lost"]; got != zkLostDisconnected {
			t.Errorf("%s: tuned zk-lost %q", name, got)
		}
		if !strings.Contains(tuned.Info().Summary, "connection to the ensemble drops") {
			t.Errorf("%s: summary does not say Lost fires on a dropped connection: %s", name, tuned.Info().Summary)
		}
		if _, err := Tune(st, map[string]string{"zk-lost": "never"}, time.Second); err == nil || !strings.Contains(err.Error(), "valid: expired, disconnected") {
			t.Errorf("%s: zk-lost never: %v", name, err)
		}
	}
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for _, onDisconnect := range []bool{false, true} {
		s := &zkSession{lost: make(chan struct{}), onDisconnect: onDisconnect}
		first := s.lostCh()
		s.event(zk.Event{Type: zk.EventSession, State: zk.StateDisconnected})
		if closed(first) != onDisconnect {
			t.Errorf("onDisconnect %v: lost closed at a disconnect: %v", onDisconnect, closed(first))
		}
		s.event(zk.Event{Type: zk.EventSession, State: zk.StateHasSession})
		if onDisconnect && (s.lostCh() == first || closed(s.lostCh())) {
			t.Error("a reconnect did not give later leases a fresh lost signal")
		}
		s.event(zk.Event{Type: zk.EventSession, State: zk.StateExpired})
		if !closed(s.lostCh()) {
			t.Errorf("onDisconnect %v: lost not closed at expiry", onDisconnect)
		}
	}
}

// TestHoldLost: a lease's own Lost follows its session's loss signal while
// the lease is held, and never closes once its release began (end).
func TestHoldLost(t *testing.T) {
	session, life := make(chan struct{}), make(chan struct{})
	defer close(life)
	held, released := newHoldLost(session, life), newHoldLost(session, life)
	released.end()
	close(session)
	select {
	case <-held.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("a held lease's Lost did not close with its session's")
	}
	released.end() // twice: no panic
	select {
	case <-released.ch:
		t.Error("Lost closed for a lease whose release had begun")
	default:
	}
}
