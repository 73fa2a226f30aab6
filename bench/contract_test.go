package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/observer"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/validate"
	"github.com/lockbench/lockbench/verdicts"
	"github.com/lockbench/lockbench/workload"
)

// orphaning wraps token-lua: every fifth acquire of a client that finds
// the key free writes a token of its own there (SET NX PX, a real key on
// the real server) and then answers as outcome says: "fail" (a lying lock:
// it says not done, and it was), "fail-silent" (the same, stating no
// token), or "info" (an honest unknown outcome).
type orphaning struct {
	impl.Strategy
	outcome string
}

func (s orphaning) New(cfg impl.Config) (impl.Locker, error) {
	l, err := s.Strategy.New(cfg)
	if err != nil {
		return nil, err
	}
	return &orphaningLocker{Locker: l, s: s, cfg: cfg}, nil
}

type orphaningLocker struct {
	impl.Locker
	s   orphaning
	cfg impl.Config
	n   int
}

func (l *orphaningLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	l.n++
	if l.n%5 != 0 {
		return l.Locker.Acquire(ctx, key)
	}
	tok := fmt.Sprintf("%s:orphan:%d", l.cfg.Owner, l.n)
	set, err := l.cfg.Nodes[0].SetNX(ctx, key, tok, l.cfg.TTL).Result()
	if err != nil || !set {
		return l.Locker.Acquire(ctx, key)
	}
	switch l.s.outcome {
	case "fail":
		return nil, impl.WithToken(fmt.Errorf("orphaning: %w", impl.ErrNotAcquired), tok)
	case "fail-silent":
		return nil, fmt.Errorf("orphaning: %w", impl.ErrNotAcquired)
	}
	return nil, impl.WithToken(errors.New("orphaning: outcome unknown"), tok)
}

// collected is a workload.Recorder that keeps the operations in memory.
type collected struct {
	mu  sync.Mutex
	ops []history.Operation
}

func (c *collected) Record(op history.Operation) {
	c.mu.Lock()
	c.ops = append(c.ops, op)
	c.mu.Unlock()
}

// TestOrphansOnARealServer runs clients of a lock that leaves real keys
// behind on a real redis-server, with the observer reading them, and
// judges the history: a lock that says "fail" after writing its token
// (stating the token or not) breaks the orphan contract check, and the
// judgement calls it unexpected whatever the row; one that says the
// outcome is unknown leaves orphans in the figures, not a violation.
func TestOrphansOnARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	base, err := strategies.Lookup("token-lua")
	if err != nil {
		t.Fatal(err)
	}
	addr := c.Nodes()[0].Addr()
	for _, tc := range []struct {
		outcome   string
		violation bool
	}{{"fail", true}, {"fail-silent", true}, {"info", false}} {
		t.Run(tc.outcome, func(t *testing.T) {
			cfg, err := workload.Config{Clients: 4, TTL: 100 * time.Millisecond, Duration: 600 * time.Millisecond, Seed: 1, KeyPrefix: "lb:" + tc.outcome + ":"}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			rec := &collected{}
			clock := history.NewClock()
			env := workload.Env{Strategy: orphaning{base, tc.outcome}, Clock: clock, IDs: &history.IDs{}, History: rec,
				Nodes: workload.DialNodes([]string{addr}, func(int) workload.Dialer { return workload.Dialer{Timeout: 500 * time.Millisecond} })}
			obs, err := observer.Start(ctx, observer.Config{Nodes: []observer.Node{{Name: "n1", Addr: addr}},
				Keys: []string{cfg.Key(0)}, TTL: cfg.TTL, Clock: clock, History: rec})
			if err != nil {
				t.Fatal(err)
			}
			env.Observer = obs
			if _, err := workload.Run(ctx, cfg, env); err != nil {
				t.Fatal(err)
			}
			obs.Stop(ctx)
			h := history.Header{SchemaVersion: history.SchemaVersion, Strategy: "orphaning", Scenario: "baseline", Clients: cfg.Clients, Keys: 1, TTLMs: 100, Fencing: "off", Nodes: 1}
			rep := checker.Check(h, rec.ops, checker.Options{})
			if tc.violation {
				if rep.Orphans.Status != checker.Violated || len(rep.Orphans.Witnesses.Orphans) == 0 {
					t.Fatalf("orphans %s: %s; want violated", rep.Orphans.Status, rep.Orphans.Message)
				}
				w := rep.Orphans.Witnesses.Orphans[0]
				if !strings.Contains(w.Token, ":orphan:") || (tc.outcome == "fail") != (w.Acquire != nil) {
					t.Errorf("witness %s", w)
				}
			} else if rep.Orphans.Status != checker.OK || rep.Figures.Orphans == 0 {
				t.Fatalf("orphans %s (%s), %d in the figures; want ok with orphans counted", rep.Orphans.Status, rep.Orphans.Message, rep.Figures.Orphans)
			}
			t.Logf("%s: %s; evidence: %d of %d failed acquires observed", tc.outcome, rep.Orphans.Message, rep.Evidence.FailedAcquiresObserved, rep.Evidence.Acquires.Fail)
			var out results.Run
			out.Scenario = "baseline"
			validate.Fill(&out, rec.ops, rep, verdicts.Expectation{Exclusion: verdicts.AtRisk, Resource: verdicts.AtRisk, Liveness: verdicts.AtRisk}, t.TempDir())
			gated := strings.Contains(strings.Join(out.Unexpected, "\n"), "orphans must hold but is violated")
			if gated != tc.violation || out.Verdict.Orphans != rep.Orphans.Status {
				t.Errorf("judged %q (orphans %s): gated %v, want %v", out.Unexpected, out.Verdict.Orphans, gated, tc.violation)
			}
		})
	}
}

// lateLost wraps token-lua with a Lost signal that fires 10 ms after the
// lease's release returned: a renewal that outlives its release.
type lateLost struct{ impl.Strategy }

func (s lateLost) New(cfg impl.Config) (impl.Locker, error) {
	l, err := s.Strategy.New(cfg)
	return &lateLostLocker{Locker: l}, err
}

type lateLostLocker struct {
	impl.Locker
	mu   sync.Mutex
	lost map[*impl.Lease]chan struct{}
}

func (l *lateLostLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	lease, err := l.Locker.Acquire(ctx, key)
	if lease != nil {
		ch := make(chan struct{})
		l.mu.Lock()
		if l.lost == nil {
			l.lost = map[*impl.Lease]chan struct{}{}
		}
		l.lost[lease] = ch
		l.mu.Unlock()
		lease.Lost = ch
	}
	return lease, err
}

func (l *lateLostLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	n, err := l.Locker.Release(ctx, lease)
	l.mu.Lock()
	ch := l.lost[lease]
	delete(l.lost, lease)
	l.mu.Unlock()
	time.AfterFunc(10*time.Millisecond, func() { close(ch) })
	return n, err
}

// TestLostAfterReleaseRecorded: the workload records a lost signal that
// comes after the hold's release, and the lost contract check flags it.
func TestLostAfterReleaseRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	base, err := strategies.Lookup("token-lua")
	if err != nil {
		t.Fatal(err)
	}
	rec := &collected{}
	env := workload.Env{Strategy: lateLost{base}, Clock: history.NewClock(), IDs: &history.IDs{}, History: rec,
		Nodes: workload.DialNodes([]string{c.Nodes()[0].Addr()}, func(int) workload.Dialer { return workload.Dialer{Timeout: 500 * time.Millisecond} })}
	cfg := workload.Config{Clients: 2, TTL: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 1}
	if _, err := workload.Run(ctx, cfg, env); err != nil {
		t.Fatal(err)
	}
	r := checker.Lost(history.Header{TTLMs: 100}, rec.ops)
	if r.Status != checker.Violated || r.Witnesses.Lost[0].Kind != witness.LostAfterRelease {
		t.Fatalf("lost %s: %s", r.Status, r.Message)
	}
}
