package chaos

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// grants watches the clients' grants (workload.PointAcquired events) so a
// nemesis can hold the client it struck until another client has been
// granted the same key: the moment a lost lock turns into two holders. Feed
// it every event with see. Safe for concurrent use.
type grants struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every grant
	last    map[string]grant
}

type grant struct {
	client int
	hold   int64
}

func newGrants() *grants {
	return &grants{changed: make(chan struct{}), last: map[string]grant{}}
}

// see records ev if it is a grant.
func (g *grants) see(ev workload.Event) {
	if ev.Point != workload.PointAcquired {
		return
	}
	g.mu.Lock()
	g.last[ev.Key] = grant{ev.Client, ev.Hold}
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

// waitOther waits until a client other than client is granted key after the
// call, or timeout passes, or ctx ends. It reports whether one was.
func (g *grants) waitOther(ctx context.Context, client int, key string, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		g.mu.Lock()
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
			g.mu.Lock()
			last := g.last[key]
			g.mu.Unlock()
			if last.client != client {
				return true
			}
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// faultLog collects errors of fault actions taken inside At (whose errors
// the workload ignores unless they are impl.ErrCrashed) and of background
// goroutines, for Heal to return; and waits for those goroutines.
type faultLog struct {
	mu   sync.Mutex
	errs []error
	bg   sync.WaitGroup
}

func (f *faultLog) fail(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	f.errs = append(f.errs, err)
	f.mu.Unlock()
}

func (f *faultLog) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}
