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
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every grant
	last     map[string]grant
	attempts map[string]int // outermost acquire calls begun, by key
}

type grant struct {
	client int
	hold   int64
}

func newGrants() *grants {
	return &grants{changed: make(chan struct{}), last: map[string]grant{}, attempts: map[string]int{}}
}

// see records ev if it is a grant, and counts it if it is an outermost
// acquire call about to begin.
func (g *grants) see(ev workload.Event) {
	if ev.Point == workload.PointBeforeAcquire && ev.Depth <= 1 {
		g.mu.Lock()
		g.attempts[ev.Key]++
		g.mu.Unlock()
		return
	}
	if ev.Point != workload.PointAcquired {
		return
	}
	g.mu.Lock()
	g.last[ev.Key] = grant{ev.Client, ev.Hold}
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

// attemptsOf is how many outermost acquire calls of key have begun so far
// (every client's, retries included).
func (g *grants) attemptsOf(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.attempts[key]
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

// cycles watches the clients' grants (PointAcquired) and releases
// (PointReleased) so a nemesis can hold the client it struck until another
// client has been granted the same key, or granted it and released it (its
// write is done by then). Feed it every event with see. Safe for
// concurrent use.
type cycles struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every grant and release
	seq      int64         // grants seen so far
	current  map[int]int64 // client → number of its current grant
	granted  map[string]map[int]int64
	released map[string]map[int]int64
}

func newCycles() *cycles {
	return &cycles{changed: make(chan struct{}), current: map[int]int64{},
		granted: map[string]map[int]int64{}, released: map[string]map[int]int64{}}
}

// see records ev if it is a grant or a release.
func (c *cycles) see(ev workload.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.Point {
	case workload.PointAcquired:
		c.seq++
		c.current[ev.Client] = c.seq
		set(c.granted, ev.Key, ev.Client, c.seq)
	case workload.PointReleased:
		set(c.released, ev.Key, ev.Client, c.current[ev.Client])
	default:
		return
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

func set(m map[string]map[int]int64, key string, client int, v int64) {
	if m[key] == nil {
		m[key] = map[int]int64{}
	}
	m[key][client] = v
}

// mark returns the number of grants seen so far, for otherAfter.
func (c *cycles) mark() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// otherAfter reports whether a client other than client was granted key
// after grant number since (and, with released, has released that hold).
// The caller holds c.mu.
func (c *cycles) otherAfter(client int, key string, since int64, released bool) bool {
	m := c.granted[key]
	if released {
		m = c.released[key]
	}
	for cl, n := range m {
		if cl != client && n > since {
			return true
		}
	}
	return false
}

// has reports otherAfter(client, key, since, released) now.
func (c *cycles) has(client int, key string, since int64, released bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.otherAfter(client, key, since, released)
}

// wait waits until otherAfter(client, key, since, released) holds, timeout
// passes or ctx ends, and reports whether it holds.
func (c *cycles) wait(ctx context.Context, client int, key string, since int64, released bool, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		c.mu.Lock()
		ok, ch := c.otherAfter(client, key, since, released), c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
