// Command lockbench-adapter-go serves lockbench's process protocol
// (docs/protocol.md, version 2) for one of lockbench's built-in
// strategies, so the protocol path can be checked against the in-process
// one: the same strategy must give the same verdicts both ways.
//
//	lockbench-adapter-go --strategy token-lua [--check] [--extend] [--validity] [--threads N [--shared-lock]]
//
// Replies state the strategy's reasons (impl.Reason) and, for a failed or
// unknown acquire, the token it tried; cancel requests cancel the call's
// context, as a cancelled call in-process. --check serves check requests
// (the Locker's impl.Checker, else its own view: the lease is held, its
// Lost has not fired and its validity has not passed); --extend serves
// extend requests for a strategy that does not renew by itself (its
// impl.Extender) and claims renewal; --validity claims validity and states
// validity_ms on grants and extends (TTL − the call's time − drift,
// TTL·0.01 + 2 ms, unless the strategy computes its own); --threads N
// serves N logical clients per process, concurrently, each with its own
// Locker, or one Locker shared by all with --shared-lock.
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

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/adapter"
	"github.com/lockbench/lockbench/internal/redislog"
)

func main() {
	var o options
	name := flag.String("strategy", "", "the built-in strategy to serve (lockbench list)")
	flag.BoolVar(&o.check, "check", false, "serve check requests (lockbench asks before each write)")
	flag.BoolVar(&o.extend, "extend", false, "serve extend requests and claim renewal (lockbench renews every TTL/3); for a strategy that does not renew by itself")
	flag.BoolVar(&o.validity, "validity", false, "claim validity: state validity_ms on grants and extends")
	flag.IntVar(&o.threads, "threads", 1, "logical clients per process")
	flag.BoolVar(&o.sharedLock, "shared-lock", false, "the logical clients of a process share one Locker (with --threads 2 or more)")
	flag.Parse()
	st, err := strategies.Lookup(*name)
	if err == nil && adapterclient.IsExec(*name) {
		err = errors.New("an exec: strategy cannot be served again")
	}
	if err == nil {
		err = o.valid(st)
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
	s := &server{st: st, sec: security.FromEnv(), opts: o, in: bufio.NewScanner(os.Stdin), out: os.Stdout,
		clients: map[string]*client{}, inflight: map[int64]*request{}}
	s.in.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if err := s.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench-adapter-go:", err)
		os.Exit(1)
	}
}

// options are the command's flags beside --strategy.
type options struct {
	check, extend, validity, sharedLock bool
	threads                             int
}

// valid checks the flags against the strategy.
func (o options) valid(st impl.Strategy) error {
	switch {
	case o.threads < 1:
		return fmt.Errorf("--threads %d: give 1 or more", o.threads)
	case o.sharedLock && o.threads < 2:
		return errors.New("--shared-lock needs --threads 2 or more")
	case o.extend && st.Info().Claims.Renewal:
		return fmt.Errorf("--extend: %s renews by itself; --extend serves lockbench's renewal of a strategy that does not", st.Name())
	case o.extend && st.Info().Claims.Quorum:
		return fmt.Errorf("--extend: %s has no single-node extend", st.Name())
	}
	return nil
}

// server is one adapter process: its logical clients, by owner, and the
// requests in flight, by id.
type server struct {
	st    impl.Strategy
	sec   security.Security // the servers' AUTH and TLS, from the environment
	opts  options
	in    *bufio.Scanner
	out   io.Writer
	outMu sync.Mutex

	mu       sync.Mutex
	clients  map[string]*client // by owner (the requests' client field)
	shared   *client            // with --shared-lock: the client every logical client uses
	inflight map[int64]*request // requests being served, by id
	ttlOf    time.Duration      // the TTL the inits gave
	wg       sync.WaitGroup
}

// client is one logical client: its Locker and nodes, its leases by token.
type client struct {
	owner  string
	locker impl.Locker
	nodes  []redis.UniversalClient

	mu     sync.Mutex
	leases map[string]*held // by token, until released
}

// request is a request being served: its context's cancel (a cancel
// request) and the channel its point events' answers come on.
type request struct {
	cancel  context.CancelCauseFunc
	answers chan adapter.Message
}

// errCancelled is the cause of a request's context that lockbench cancelled.
var errCancelled = errors.New("cancelled by lockbench")

// held is a lease this adapter granted and lockbench has not released;
// released is closed at its release. validUntil is its validity as the
// adapter states it (zero: none), moved by extends.
type held struct {
	lease      *impl.Lease
	owner      string
	released   chan struct{}
	validUntil time.Time
}

// hello is the declaration: the strategy's claims (renewal with --extend,
// validity with --validity), policy, nodes, its crash point (naive:
// between SETNX and PEXPIRE) if it has one, and the protocol-2 fields.
func (s *server) hello() adapter.Message {
	in := s.st.Info()
	c := in.Claims
	o := s.opts
	m := adapter.Message{Type: adapter.TypeHello, Protocol: adapter.ProtocolVersion,
		Name: "go:" + s.st.Name(), Version: version(), Summary: in.Summary, Source: in.Source,
		Claims: &adapter.Claims{AtomicAcquire: c.AtomicAcquire, TokenRelease: c.TokenRelease, Renewal: c.Renewal || o.extend,
			Reentrant: c.Reentrant, Quorum: c.Quorum, Fencing: c.Fencing, Validity: c.Validity || o.validity},
		Policy: &adapter.Policy{CheckValidity: in.Policy.CheckValidity || o.validity, HonourLost: in.Policy.HonourLost || o.extend},
		Nodes:  in.Nodes, Server: in.Server.String(), Extend: o.extend, Check: o.check, Cancel: true, SharedLock: o.sharedLock}
	if o.threads > 1 {
		m.Threads = &o.threads
	}
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

// serve writes the hello, then reads messages until stdin ends: init is
// answered in turn; every other request is served on a goroutine of its
// own (requests of different clients, and an extend beside a waiting
// acquire, run concurrently); continue and crash go to the request
// stopped at a point; cancel cancels a request's context.
func (s *server) serve() error {
	defer s.close()
	s.send(s.hello())
	for s.in.Scan() {
		var m adapter.Message
		if err := json.Unmarshal(s.in.Bytes(), &m); err != nil {
			return fmt.Errorf("stdin: %v: %q", err, s.in.Text())
		}
		switch m.Type {
		case adapter.TypeInit:
			reply, err := s.init(m)
			if err != nil {
				return err
			}
			reply.InReplyTo = m.ID
			s.send(reply)
		case adapter.TypeContinue, adapter.TypeCrash:
			s.mu.Lock()
			r := s.inflight[m.InReplyTo]
			s.mu.Unlock()
			if r != nil {
				r.answers <- m
			}
		case adapter.TypeCancel:
			s.mu.Lock()
			r := s.inflight[m.Request]
			s.mu.Unlock()
			if r != nil {
				r.cancel(errCancelled)
			}
			s.send(adapter.Message{Type: adapter.TypeOK, InReplyTo: m.ID})
		default:
			c, err := s.client(m)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(m.DeadlineMs*float64(time.Millisecond)))
			ctx, cancelCause := context.WithCancelCause(ctx)
			r := &request{cancel: cancelCause, answers: make(chan adapter.Message, 1)}
			s.mu.Lock()
			s.inflight[m.ID] = r
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				reply := s.handle(context.WithValue(ctx, requestKey{}, m.ID), c, m)
				s.mu.Lock()
				delete(s.inflight, m.ID)
				s.mu.Unlock()
				cancelCause(nil)
				cancel()
				reply.InReplyTo = m.ID
				s.send(reply)
			}()
		}
	}
	return s.in.Err()
}

// requestKey is the context key of the id of the request a call serves.
type requestKey struct{}

// client returns the logical client a request names (the only one when it
// names none).
func (s *server) client(m adapter.Message) (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[m.Client]; c != nil {
		return c, nil
	}
	if m.Client == "" && len(s.clients) == 1 {
		for _, c := range s.clients {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%s request (id %d) for client %q before its init", m.Type, m.ID, m.Client)
}

// handle answers one request of client c.
func (s *server) handle(ctx context.Context, c *client, m adapter.Message) adapter.Message {
	switch m.Type {
	case adapter.TypePing:
		return adapter.Message{Type: adapter.TypeOK}
	case adapter.TypeAcquire:
		return s.acquire(ctx, c, m)
	case adapter.TypeRelease:
		return s.release(ctx, c, m)
	case adapter.TypeExtend:
		if s.opts.extend {
			return s.extend(ctx, c, m)
		}
	case adapter.TypeCheck:
		if s.opts.check {
			return s.check(ctx, c, m)
		}
	}
	return adapter.Message{Type: adapter.TypeFail, Error: "not supported: " + m.Type}
}

// nodePoolSize is each node client's go-redis PoolSize, as lockbench's own
// clients (bench's dialer): go-redis's pool stops dialling once it has seen
// PoolSize failed dials, until a probe a second later. With 4, a few dials
// that missed redlock's 10 ms per-node budget on a busy machine left a
// client failing every call (through this adapter, redlock granted 0-8
// times per 1 s ci run where in-process it granted 20-65).
const nodePoolSize = 1024

// init makes a logical client: one go-redis client per endpoint (no
// retries, deadlines from each request) and its Locker; with
// --shared-lock, the first init's client serves every later one.
func (s *server) init(m adapter.Message) (adapter.Message, error) {
	s.mu.Lock()
	shared := s.shared
	s.ttlOf = time.Duration(m.TTLMs) * time.Millisecond
	s.mu.Unlock()
	if shared != nil {
		s.mu.Lock()
		s.clients[m.Owner] = shared
		s.mu.Unlock()
		return adapter.Message{Type: adapter.TypeInitOK}, nil
	}
	c := &client{owner: m.Owner, leases: map[string]*held{}}
	for _, a := range m.Endpoints {
		// AUTH and TLS come through the environment (docs/protocol.md).
		c.nodes = append(c.nodes, redis.NewClient(s.sec.Apply(&redis.Options{
			Addr: a, PoolSize: nodePoolSize, MaxRetries: -1, ContextTimeoutEnabled: true,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
			DialerRetries: 1, DialerRetryTimeout: time.Millisecond,
		})))
	}
	l, err := s.st.New(impl.Config{Nodes: c.nodes, Endpoints: m.Endpoints, Security: s.sec, TTL: time.Duration(m.TTLMs) * time.Millisecond,
		Owner: m.Owner, Hook: s.hook})
	if err != nil {
		for _, n := range c.nodes {
			n.Close()
		}
		return adapter.Message{Type: adapter.TypeFail, Error: err.Error()}, nil
	}
	c.locker = l
	s.mu.Lock()
	s.clients[m.Owner] = c
	if s.opts.sharedLock {
		s.shared = c
	}
	s.mu.Unlock()
	return adapter.Message{Type: adapter.TypeInitOK}, nil
}

// hook forwards the strategy's crash point to lockbench as a point event
// of the request being served and waits for its answer: continue goes on,
// crash exits the process at once (a crash at that point). Other fault
// points (a watchdog's renewals) pass.
func (s *server) hook(ctx context.Context, p impl.Point) error {
	id, _ := ctx.Value(requestKey{}).(int64)
	if p == "" || p != s.st.Info().CrashPoint || id == 0 {
		return nil
	}
	s.mu.Lock()
	r := s.inflight[id]
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	s.send(adapter.Message{Type: adapter.TypePoint, InReplyTo: id, Point: string(p)})
	if m := <-r.answers; m.Type == adapter.TypeCrash {
		// A crash here, as lockbench asked: exit at once, without closing
		// connections or releasing anything (deferred calls do not run).
		os.Exit(1)
	}
	return nil
}

// drift is the validity's allowance for clock drift at TTL ttl, as
// redlock's: TTL·0.01 + 2 ms.
func drift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// outcome is the reply to a failed call: fail for an error wrapping
// definite, unknown otherwise; with the reason the strategy states, or
// cancelled when lockbench cancelled the call (ctx's cause).
func outcome(ctx context.Context, err, definite error) adapter.Message {
	r := adapter.Message{Type: adapter.TypeUnknown, Error: err.Error(), Reason: impl.Reason(err)}
	switch {
	case errors.Is(err, definite):
		r.Type = adapter.TypeFail
	case errors.Is(context.Cause(ctx), errCancelled):
		r.Reason = adapter.ReasonCancelled
	}
	return r
}

// validityMs returns ms left until t, for a reply (nil when t is zero).
func validityMs(t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	v := max(0, float64(time.Until(t).Microseconds())/1000)
	return &v
}

// acquire makes one attempt: ok with the lease's token, fence, count and
// validity (ms left), fail (held by another owner) or unknown, with the
// strategy's reason and the token it tried.
func (s *server) acquire(ctx context.Context, c *client, m adapter.Message) adapter.Message {
	start := time.Now()
	l, err := c.locker.Acquire(ctx, m.Key)
	if err != nil {
		r := outcome(ctx, err, impl.ErrNotAcquired)
		r.Token = impl.TriedToken(err)
		return r
	}
	h := &held{lease: l, owner: m.Client, released: make(chan struct{}), validUntil: l.Validity}
	if ttl := s.ttl(); s.opts.validity && h.validUntil.IsZero() {
		h.validUntil = start.Add(ttl - drift(ttl))
	}
	r := adapter.Message{Type: adapter.TypeOK, Token: l.Token, Fence: l.Fence, Count: l.Count, ValidityMs: validityMs(h.validUntil)}
	c.mu.Lock()
	if c.leases[l.Token] == nil { // a nested acquire of a reentrant lock keeps the outer lease's entry
		c.leases[l.Token] = h
		if l.Lost != nil {
			go s.watchLost(h)
		}
	}
	c.mu.Unlock()
	return r
}

// ttl is the lock's TTL, as the last init gave it (every init of a run
// gives the same).
func (s *server) ttl() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ttlOf
}

// watchLost sends a lost event when the lease's renewal fails before its release.
func (s *server) watchLost(h *held) {
	select {
	case <-h.lease.Lost:
		s.send(adapter.Message{Type: adapter.TypeLost, Key: h.lease.Key, Token: h.lease.Token, Client: h.owner})
	case <-h.released:
	}
}

// lease returns the held lease with token.
func (c *client) lease(token string) *held {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leases[token]
}

// release gives back one level of the lease with the request's token.
func (s *server) release(ctx context.Context, c *client, m adapter.Message) adapter.Message {
	h := c.lease(m.Token)
	if h == nil {
		return adapter.Message{Type: adapter.TypeFail, Error: "no lease with this token", Reason: adapter.ReasonUnknown}
	}
	rem, err := c.locker.Release(ctx, h.lease)
	if err == nil && rem == 0 || errors.Is(err, impl.ErrNotHeld) {
		c.mu.Lock()
		if c.leases[m.Token] == h {
			delete(c.leases, m.Token)
			close(h.released)
		}
		c.mu.Unlock()
	}
	if err != nil {
		return outcome(ctx, err, impl.ErrNotHeld)
	}
	return adapter.Message{Type: adapter.TypeOK, Remaining: rem}
}

// extend resets the TTL of the lease with the request's token (the
// Locker's impl.Extender): ok, with validity_ms under --validity (TTL −
// the call's time − drift, from the call's start), or fail or unknown.
func (s *server) extend(ctx context.Context, c *client, m adapter.Message) adapter.Message {
	h := c.lease(m.Token)
	ext, ok := c.locker.(impl.Extender)
	switch {
	case h == nil:
		return adapter.Message{Type: adapter.TypeFail, Error: "no lease with this token", Reason: adapter.ReasonUnknown}
	case !ok:
		return adapter.Message{Type: adapter.TypeFail, Error: s.st.Name() + " cannot extend"}
	}
	start := time.Now()
	if err := ext.Extend(ctx, h.lease); err != nil {
		return outcome(ctx, err, impl.ErrNotHeld)
	}
	r := adapter.Message{Type: adapter.TypeOK}
	if s.opts.validity {
		ttl := s.ttl()
		v := start.Add(ttl - drift(ttl))
		c.mu.Lock()
		h.validUntil = v
		c.mu.Unlock()
		r.ValidityMs = validityMs(v)
	}
	return r
}

// check answers whether the client still holds the lease with the
// request's token: the Locker's impl.Checker if it has one, else the
// adapter's own view (held and not released, Lost not fired, validity not
// passed), with validity_ms when it tracks one.
func (s *server) check(ctx context.Context, c *client, m adapter.Message) adapter.Message {
	h := c.lease(m.Token)
	valid := h != nil
	if h != nil {
		if ch, ok := c.locker.(impl.Checker); ok {
			v, err := ch.Check(ctx, h.lease)
			if err != nil {
				return outcome(ctx, err, impl.ErrNotHeld)
			}
			valid = v
		}
		select {
		case <-h.lease.Lost:
			valid = false
		default:
		}
	}
	r := adapter.Message{Type: adapter.TypeOK, Valid: &valid}
	if h != nil {
		c.mu.Lock()
		until := h.validUntil
		c.mu.Unlock()
		if !until.IsZero() && !time.Now().Before(until) {
			valid = false
		}
		if valid {
			r.ValidityMs = validityMs(until)
		}
	}
	return r
}

// close ends every logical client: its Locker (renewals stop) and nodes.
func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := map[*client]bool{}
	for _, c := range s.clients {
		if done[c] {
			continue
		}
		done[c] = true
		if c.locker != nil {
			c.locker.Close()
		}
		for _, n := range c.nodes {
			n.Close()
		}
	}
}
