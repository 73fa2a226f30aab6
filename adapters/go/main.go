// Command lockbench-adapter-go serves lockbench's process protocol
// (docs/protocol.md) for one of lockbench's built-in strategies, so the
// protocol path can be checked against the in-process one: the same
// strategy must give the same verdicts both ways.
//
//	lockbench-adapter-go --strategy token-lua
//
// It reads requests on stdin and writes replies on stdout, one JSON object
// a line; go-redis's own log lines are dropped. It exits when stdin ends.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/adapter"
	"github.com/lockbench/lockbench/internal/redislog"
)

func main() {
	name := flag.String("strategy", "", "the built-in strategy to serve (lockbench list)")
	flag.Parse()
	st, err := impl.Lookup(*name)
	if err == nil && impl.IsExec(*name) {
		err = errors.New("an exec: strategy cannot be served again")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench-adapter-go: --strategy:", err)
		os.Exit(2)
	}
	redislog.Quiet()
	// One client per process needs no parallel threads: 16 adapters of
	// GOMAXPROCS 2 on 2 busy cores add threads that compete for the CPU
	// with redlock's 10 ms per-node calls (exec:go-redlock, baseline, TTL
	// 100 ms, load average 20+: 0 of 2 runs conclusive; with GOMAXPROCS=1
	// for lockbench and its adapters 2 of 2; a noisy measurement, and the
	// node pool fix below mattered more). The environment's GOMAXPROCS
	// still wins.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	s := &server{st: st, in: bufio.NewScanner(os.Stdin), out: os.Stdout, leases: map[string]*held{}}
	s.in.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if err := s.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench-adapter-go:", err)
		os.Exit(1)
	}
}

// server is one client's adapter: one Locker, its leases by token.
type server struct {
	st     impl.Strategy
	in     *bufio.Scanner
	out    io.Writer
	outMu  sync.Mutex
	locker impl.Locker
	nodes  []redis.UniversalClient

	mu      sync.Mutex
	leases  map[string]*held // by token, until released
	current int64            // the request being served, for point events
}

// held is a lease this adapter granted and lockbench has not released;
// released is closed at its release.
type held struct {
	lease    *impl.Lease
	released chan struct{}
}

// hello is the declaration: the strategy's claims, policy, nodes and its
// crash point (naive: between SETNX and PEXPIRE), if it has one.
func (s *server) hello() adapter.Message {
	in := s.st.Info()
	c := in.Claims
	m := adapter.Message{Type: adapter.TypeHello, Protocol: adapter.ProtocolVersion,
		Name: "go:" + s.st.Name(), Version: version(), Summary: in.Summary, Source: in.Source,
		Claims: &adapter.Claims{AtomicAcquire: c.AtomicAcquire, TokenRelease: c.TokenRelease, Renewal: c.Renewal,
			Reentrant: c.Reentrant, Quorum: c.Quorum, Fencing: c.Fencing, Validity: c.Validity},
		Policy: &adapter.Policy{CheckValidity: in.Policy.CheckValidity, HonourLost: in.Policy.HonourLost},
		Nodes:  in.Nodes, Server: in.Server.String()}
	if in.CrashPoint != "" {
		m.CrashPoints = []string{string(in.CrashPoint)}
	}
	return m
}

// version is lockbench's commit this adapter was built from, with the
// library the strategy wraps, if any.
func version() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" && len(kv.Value) >= 12 {
				v = kv.Value[:12]
			}
		}
	}
	return "lockbench " + v
}

func (s *server) send(m adapter.Message) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.out.Write(adapter.Encode(m))
}

// serve writes the hello, then answers requests until stdin ends.
func (s *server) serve() error {
	defer s.close()
	s.send(s.hello())
	for s.in.Scan() {
		var m adapter.Message
		if err := json.Unmarshal(s.in.Bytes(), &m); err != nil {
			return fmt.Errorf("stdin: %v: %q", err, s.in.Text())
		}
		s.mu.Lock()
		s.current = m.ID
		s.mu.Unlock()
		reply, err := s.handle(m)
		if err != nil {
			return err
		}
		reply.InReplyTo = m.ID
		s.send(reply)
	}
	return s.in.Err()
}

// handle answers one request.
func (s *server) handle(m adapter.Message) (adapter.Message, error) {
	switch m.Type {
	case adapter.TypeInit:
		return s.init(m)
	case adapter.TypePing:
		return adapter.Message{Type: adapter.TypeOK}, nil
	case adapter.TypeAcquire:
		if s.locker == nil {
			return adapter.Message{}, errors.New("acquire before init")
		}
		return s.acquire(m), nil
	case adapter.TypeRelease:
		if s.locker == nil {
			return adapter.Message{}, errors.New("release before init")
		}
		return s.release(m), nil
	}
	return adapter.Message{Type: adapter.TypeFail, Error: "not supported: " + m.Type}, nil
}

// nodePoolSize is each node client's go-redis PoolSize, as lockbench's own
// clients (bench's dialer): go-redis's pool stops dialling once it has seen
// PoolSize failed dials, until a probe a second later. With 4, a few dials
// that missed redlock's 10 ms per-node budget on a busy machine left a
// client failing every call (through this adapter, redlock granted 0-8
// times per 1 s ci run where in-process it granted 20-65).
const nodePoolSize = 1024

// init dials one go-redis client per endpoint (no retries, deadlines from
// each request) and makes the Locker.
func (s *server) init(m adapter.Message) (adapter.Message, error) {
	for _, a := range m.Endpoints {
		s.nodes = append(s.nodes, redis.NewClient(&redis.Options{
			Addr: a, PoolSize: nodePoolSize, MaxRetries: -1, ContextTimeoutEnabled: true,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
			DialerRetries: 1, DialerRetryTimeout: time.Millisecond,
		}))
	}
	l, err := s.st.New(impl.Config{Nodes: s.nodes, Endpoints: m.Endpoints, TTL: time.Duration(m.TTLMs) * time.Millisecond,
		Owner: m.Owner, Hook: s.hook})
	if err != nil {
		return adapter.Message{Type: adapter.TypeFail, Error: err.Error()}, nil
	}
	s.locker = l
	return adapter.Message{Type: adapter.TypeInitOK}, nil
}

// hook forwards the strategy's crash point to lockbench as a point event
// and waits for its answer: continue goes on, crash exits the process at
// once (a crash at that point). Other fault points (a watchdog's renewals) pass.
func (s *server) hook(_ context.Context, p impl.Point) error {
	if p == "" || p != s.st.Info().CrashPoint {
		return nil
	}
	s.mu.Lock()
	id := s.current
	s.mu.Unlock()
	s.send(adapter.Message{Type: adapter.TypePoint, InReplyTo: id, Point: string(p)})
	if !s.in.Scan() {
		os.Exit(0) // stdin ended: lockbench is gone
	}
	var m adapter.Message
	if err := json.Unmarshal(s.in.Bytes(), &m); err != nil || m.Type == adapter.TypeCrash {
		// A crash here, as lockbench asked: exit at once, without closing
		// connections or releasing anything (deferred calls do not run).
		os.Exit(1)
	}
	return nil
}

func deadline(m adapter.Message) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(m.DeadlineMs*float64(time.Millisecond)))
}

// acquire makes one attempt: ok with the lease's token, fence, count and
// validity (ms left), fail (held by another owner) or unknown.
func (s *server) acquire(m adapter.Message) adapter.Message {
	ctx, cancel := deadline(m)
	defer cancel()
	l, err := s.locker.Acquire(ctx, m.Key)
	switch {
	case errors.Is(err, impl.ErrNotAcquired):
		return adapter.Message{Type: adapter.TypeFail, Error: err.Error()}
	case err != nil:
		return adapter.Message{Type: adapter.TypeUnknown, Error: err.Error()}
	}
	r := adapter.Message{Type: adapter.TypeOK, Token: l.Token, Fence: l.Fence, Count: l.Count}
	if !l.Validity.IsZero() {
		v := float64(time.Until(l.Validity).Microseconds()) / 1000
		r.ValidityMs = &v
	}
	s.mu.Lock()
	h := s.leases[l.Token]
	if h == nil { // a nested acquire of a reentrant lock keeps the outer lease's entry
		h = &held{lease: l, released: make(chan struct{})}
		s.leases[l.Token] = h
		if l.Lost != nil {
			go s.watchLost(h)
		}
	}
	s.mu.Unlock()
	return r
}

// watchLost sends a lost event when the lease's renewal fails before its release.
func (s *server) watchLost(h *held) {
	select {
	case <-h.lease.Lost:
		s.send(adapter.Message{Type: adapter.TypeLost, Key: h.lease.Key, Token: h.lease.Token})
	case <-h.released:
	}
}

// release gives back one level of the lease with the request's token.
func (s *server) release(m adapter.Message) adapter.Message {
	s.mu.Lock()
	h := s.leases[m.Token]
	s.mu.Unlock()
	if h == nil {
		return adapter.Message{Type: adapter.TypeFail, Error: "no lease with this token"}
	}
	ctx, cancel := deadline(m)
	defer cancel()
	rem, err := s.locker.Release(ctx, h.lease)
	if err == nil && rem == 0 || errors.Is(err, impl.ErrNotHeld) {
		s.mu.Lock()
		delete(s.leases, m.Token)
		s.mu.Unlock()
		close(h.released)
	}
	switch {
	case errors.Is(err, impl.ErrNotHeld):
		return adapter.Message{Type: adapter.TypeFail, Error: err.Error()}
	case err != nil:
		return adapter.Message{Type: adapter.TypeUnknown, Error: err.Error()}
	}
	return adapter.Message{Type: adapter.TypeOK, Remaining: rem}
}

func (s *server) close() {
	if s.locker != nil {
		s.locker.Close()
	}
	for _, n := range s.nodes {
		n.Close()
	}
}
