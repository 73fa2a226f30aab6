package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/resource"
)

// Recorder receives every operation; *history.Writer is one.
type Recorder interface {
	Record(op history.Operation)
}

// Env is what a run needs besides its Config.
type Env struct {
	// Strategy is the lock strategy under test.
	Strategy impl.Strategy
	// Nodes returns the Redis clients of one logical client, one per node
	// (the caller may route some clients through proxies). Run closes them.
	// nil: none (strategies that dial Endpoints themselves).
	Nodes func(client int) ([]redis.UniversalClient, error)
	// Endpoints returns the server addresses (host:port) one logical client
	// must use, one per node, in the order of Nodes (client -1: the
	// liveness probe); they reach impl.Config.Endpoints. nil: none.
	Endpoints func(client int) []string
	// Security is the AUTH and TLS of the servers at Endpoints; it reaches
	// impl.Config.Security (strategies that dial Endpoints themselves).
	// Zero: plain.
	Security security.Security
	// RoundTrips returns the round-trip counter of one logical client,
	// the one its Nodes count into (Dialer.Rounds), so each acquire and
	// release records the round trips it made (history.Operation.RoundTrips);
	// nil: not counted (adapter locks).
	RoundTrips func(client int) *RoundTrips
	// Faults is the client-side nemesis; nil: none.
	Faults Faults
	// History receives every operation. Required unless NoHistory.
	History Recorder
	// NoHistory runs without recording any operation (History is ignored):
	// only for measuring what recording costs (lockbench perf); such a run
	// cannot be checked.
	NoHistory bool
	// Clock stamps operations.
	Clock *history.Clock
	// IDs hands out hold and stream ids.
	IDs *history.IDs
	// Resource is the protected resource.
	Resource *resource.Resource
	// Now is the clients' clock for validity deadlines; default time.Now.
	Now func() time.Time
	// Ready is the run's readiness barrier, which Run closes once every
	// client made its first call (give the same one to the nemesis, which
	// times its faults from it); nil: Run uses one of its own.
	Ready *Readiness
	// Observer, when set, is asked to read a key's state on the servers
	// (an *Observer records it) after every acquire that did not grant,
	// every release or renewal that failed and every lost lease; nil:
	// nothing is observed.
	Observer Notifier
}

// Notifier is what the workload asks for a read of a key's server state
// (*Observer is one); Notify must not block.
type Notifier interface {
	Notify(key string)
}

// nodes returns Nodes(client), or none when Nodes is nil.
func (e Env) nodes(client int) ([]redis.UniversalClient, error) {
	if e.Nodes == nil {
		return nil, nil
	}
	return e.Nodes(client)
}

// endpoints returns Endpoints(client), or none when Endpoints is nil.
func (e Env) endpoints(client int) []string {
	if e.Endpoints == nil {
		return nil
	}
	return e.Endpoints(client)
}

// Stats summarise a run's workload.
type Stats struct {
	// Grants counts successful outermost acquires.
	Grants int
	// Attempts counts acquire attempts (outermost) by result.
	Attempts map[history.Result]int
	// LatenciesMs are, per grant, the time from the first attempt to the
	// grant (retries included), in ms.
	LatenciesMs []float64
	// Elapsed is the measured time from the start of the clients to the end
	// of the last client.
	Elapsed time.Duration
	// ReadyAfter is how long after their start every client had made its
	// first call (the readiness barrier, Env.Ready): the clients ran
	// Config.Duration after that.
	ReadyAfter time.Duration
	// Crashed counts clients that died at a fault point.
	Crashed int
	// MaxOverrun is the largest delay the harness itself added to a hold:
	// the amount by which a critical section's wait overran its planned
	// duration, or the time from a grant to the first read beyond what the
	// nemesis hook and nested acquires took. It is the machine's scheduling
	// delay (an overloaded machine), not a fault. Verdicts of runs with an overrun
	// near the TTL are not trustworthy.
	MaxOverrun time.Duration
}

// Run runs cfg's clients until cfg.Duration has passed (clients finish the
// hold they are in), recording every operation to env.History. It returns an
// error only when the run could not start (a client's Redis clients or
// Locker could not be built) or ctx was cancelled (Ctrl-C); lock failures are
// results, not errors.
func Run(ctx context.Context, cfg Config, env Env) (Stats, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return Stats{}, err
	}
	if env.Faults == nil {
		env.Faults = NoFaults{}
	}
	switch {
	case env.NoHistory:
		env.History = discard{}
	case env.History == nil:
		return Stats{}, errors.New("workload: Env.History is nil: give a recorder (e.g. a *history.Writer), or set NoHistory to run unrecorded")
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Resource == nil {
		env.Resource = resource.New(cfg.Fencing)
	}
	// One strategy for the run's Lockers: an adapter serving several
	// logical clients per process shares its processes among them.
	runSt := adapterclient.ForRun(env.Strategy)
	clients := make([]*client, cfg.Clients)
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	for i := range clients {
		c, err := newClient(i, cfg, env)
		if err != nil {
			return Stats{}, err
		}
		c.st = runSt
		clients[i] = c
	}
	// Lockers start side by side, one per core: an exec: strategy starts
	// one adapter process per client, which may take a second of CPU (a
	// Python interpreter); more at once would only make each one's start,
	// which its hello timeout bounds, longer.
	lockerErrs := make([]error, len(clients))
	var started sync.WaitGroup
	slots := make(chan struct{}, runtime.NumCPU())
	for i, c := range clients {
		started.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; started.Done() }()
			lockerErrs[i] = c.newLocker()
		}()
	}
	started.Wait()
	for _, err := range lockerErrs {
		if err != nil {
			return Stats{}, err // the lowest client's: one line
		}
	}
	// The run lasts cfg.Duration after the readiness barrier: every client
	// has made its first call, so a fault schedule timed from it (the
	// nemesis's) meets clients that run; a client slow to start (an
	// adapter process) makes the run longer, not its faults miss.
	if env.Ready == nil {
		env.Ready = NewReadiness()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-env.Ready.Done():
		case <-runCtx.Done():
			return
		}
		t := time.NewTimer(cfg.Duration)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-runCtx.Done():
		}
	}()
	// A client whose Locker cannot go on (impl.ErrFatal) stops the run.
	var fatalOnce sync.Once
	var fatal error
	for _, c := range clients {
		c.stopRun = func(err error) {
			fatalOnce.Do(func() { fatal = fmt.Errorf("workload: client %d: %w", c.id, err) })
			cancel()
		}
	}
	start := time.Now()
	rc := &readyCount{r: env.Ready, start: start, now: env.Clock.Now}
	rc.left.Store(int64(len(clients)))
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		c.readyOnce = rc.ready
		go func() {
			defer wg.Done()
			defer c.flush()
			defer c.markReady() // a client that stopped before its first call
			c.loop(ctx, runCtx)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, c := range clients {
		close(c.stopWatch) // lost signals after the run are not waited for
		c.watchers.Wait()
	}
	st := Stats{Attempts: map[history.Result]int{}, Elapsed: elapsed, ReadyAfter: env.Ready.Waited()}
	for _, c := range clients {
		st.Grants += c.grants
		for k, v := range c.attempts {
			st.Attempts[k] += v
		}
		st.LatenciesMs = append(st.LatenciesMs, c.latencies...)
		if c.crashed {
			st.Crashed++
		}
		st.MaxOverrun = max(st.MaxOverrun, c.maxOverrun)
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("workload: interrupted: %w", err)
	}
	return st, fatal
}

// buffered is a Recorder that gives each client a buffer of its own
// (history.Writer): a client's operations are encoded in its goroutine and
// handed over in chunks. The client flushes it when its loop ends.
type buffered interface {
	NewBuffer() *history.Buffer
}

// observe asks the run's Observer, if any, for a read of key.
func (c *client) observe(key string) {
	if c.env.Observer != nil {
		c.env.Observer.Notify(key)
	}
}

// flush hands the client's buffered operations to the recorder.
func (c *client) flush() {
	if c.buf != nil {
		c.buf.Flush()
	}
}

// discard is the Recorder of an unrecorded run (Env.NoHistory).
type discard struct{}

func (discard) Record(history.Operation) {}

// client is one closed-loop client: one owner, its own Redis clients.
type client struct {
	id     int
	ownKey string // the client's key when cfg.OwnKeys
	cfg    Config
	env    Env
	rng    *rand.Rand
	zipf   *rand.Zipf
	nodes  []redis.UniversalClient
	st     impl.Strategy // the run's (adapterclient.ForRun)
	locker impl.Locker
	// dead reports whether the Locker's process is gone: an adapter
	// process shared with other logical clients that one of them crashed
	// (killed); nil when the Locker has none.
	dead interface{ Dead() bool }
	// proc is the Locker's process, when it runs in one (exec:); nil otherwise.
	proc adapterclient.ClientProcess
	// checker is the Locker's Checker, when it has one (asked before each
	// write under Policy.AskLock); nil otherwise.
	checker impl.Checker
	// call is offered to Faults before each acquire and release (Event.Call);
	// extendCall before each extend lockbench drives on the renewal goroutine.
	call, extendCall Call
	// stopRun ends the run with a Locker error wrapping impl.ErrFatal.
	stopRun func(error)
	// readyOnce tells the readiness barrier this client made its first
	// call; markReady calls it once.
	readyOnce func()
	readyDone bool
	stream    int
	// buf records this client's own operations when the recorder offers
	// per-client buffers (a *history.Writer does); nil: env.History.Record.
	buf *history.Buffer

	mu      sync.Mutex
	key     string      // key being acquired or held, for strategy hooks
	holdID  int64       // the hold in progress (0 between holds), for renewals
	lease   *impl.Lease // the outermost lease of that hold (nil between holds)
	crashed bool
	// crashPoint is the strategy fault point where a fault crashed the
	// client inside a lock call (naive's after-setnx, an adapter's declared
	// crash point); "" otherwise.
	crashPoint Point

	grants     int
	attempts   map[history.Result]int
	latencies  []float64
	maxOverrun time.Duration

	// watchers counts the goroutines watching a lease's Lost (watchLost);
	// stopWatch, closed when the run ends, stops those that outlived
	// their hold.
	watchers  sync.WaitGroup
	stopWatch chan struct{}
}

func newClient(id int, cfg Config, env Env) (*client, error) {
	nodes, err := env.nodes(id)
	if err != nil {
		return nil, fmt.Errorf("workload: client %d: redis clients: %w", id, err)
	}
	c := &client{
		id: id, cfg: cfg, env: env, nodes: nodes,
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(id)+1)),
		stream:   env.IDs.NextStream(),
		attempts: map[history.Result]int{}, stopWatch: make(chan struct{}),
	}
	if b, ok := env.History.(buffered); ok {
		c.buf = b.NewBuffer()
	}
	if cfg.OwnKeys {
		c.ownKey = cfg.Key(id)
	}
	if cfg.Zipf && cfg.Keys > 1 {
		c.zipf = rand.NewZipf(c.rng, 1.1, 1, uint64(cfg.Keys-1))
	}
	return c, nil
}

// newLocker makes the client's Locker (and notes its process, if any).
func (c *client) newLocker() error {
	l, err := c.st.New(impl.Config{
		Client:    c.id,
		Nodes:     c.nodes,
		Endpoints: c.env.endpoints(c.id),
		Security:  c.env.Security,
		TTL:       c.cfg.TTL,
		Owner:     fmt.Sprintf("c%d-%d", c.id, c.cfg.Seed),
		Now:       c.env.Now,
		Hook:      c.hook,
		OnRenew:   c.onRenew,
		CallContext: func(ctx context.Context) (context.Context, func() bool) {
			return c.extendCall.start(ctx), c.extendCall.finish
		},
		OnNodeCall:   c.onNodeCall,
		OnLostUnheld: c.onLostUnheld,
		RoundTrip:    c.roundTripFunc(),
	})
	if err != nil {
		return fmt.Errorf("workload: client %d: %s: %w", c.id, c.env.Strategy.Name(), err)
	}
	c.locker = l
	c.proc, _ = l.(adapterclient.ClientProcess)
	c.dead, _ = l.(interface{ Dead() bool })
	c.checker, _ = l.(impl.Checker)
	return nil
}

func (c *client) close() {
	if c.locker != nil {
		c.locker.Close()
	}
	for _, n := range c.nodes {
		n.Close()
	}
}

// hook is the impl.Hook of this client's Locker: strategy fault points go to
// Faults; a crashed client's renewals stop.
func (c *client) hook(ctx context.Context, p impl.Point) error {
	c.mu.Lock()
	key, crashed, hold, lease := c.key, c.crashed, c.holdID, c.lease
	c.mu.Unlock()
	if crashed {
		return impl.ErrCrashed
	}
	ev := Event{Client: c.id, Point: Point(p), Key: key, Hold: hold, Lease: lease, Process: c.proc}
	if p == impl.PointExtend {
		ev.Call = c.extendCall.next()
	}
	err := c.env.Faults.At(ctx, ev)
	if errors.Is(err, impl.ErrCrashed) {
		c.mu.Lock()
		c.crashPoint = Point(p)
		c.mu.Unlock()
	}
	return err
}

// crashedAt returns the point where a fault crashed the client inside a
// lock call, or def when none was recorded.
func (c *client) crashedAt(def Point) Point {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashPoint != "" {
		return c.crashPoint
	}
	return def
}

// onRenew records a strategy's renewal (watchdog, an adapter's extend) as
// an extend operation, with the lock's stated reason and the validity the
// renewal reported. It runs on the renewal goroutine, so it records on
// stream -1, outside the client's stream; times are converted from the
// client clock's durations.
func (c *client) onRenew(r impl.Renewal) {
	c.mu.Lock()
	hold := c.holdID
	c.mu.Unlock()
	done := c.now()
	op := history.Operation{Client: c.id, Stream: -1, Kind: history.Extend, Key: r.Key, Hold: hold, Token: r.Token,
		Invoke: done - int64(r.Complete.Sub(r.Invoke)), Complete: done, ValidUntil: c.env.Clock.At(r.ValidUntil)}
	op.Result, op.Error = resultOf(r.Err, impl.ErrNotHeld)
	op.Reason = reasonOf(r.Err)
	c.env.History.Record(op)
	if r.Err != nil {
		c.observe(r.Key)
	}
}

// onNodeCall records one per-node call of a quorum strategy as an acquire
// or release operation with Node set (checkers use whole-lock operations
// only; these show which nodes granted). It runs on per-node goroutines, so
// it records on stream -1.
func (c *client) onNodeCall(node, call, key, token string, invoke, complete time.Time, err error) {
	done := c.now()
	op := history.Operation{Client: c.id, Stream: -1, Kind: history.Acquire, Key: key, Node: node, Token: token,
		Invoke: done - int64(complete.Sub(invoke)), Complete: done}
	fail := impl.ErrNotAcquired
	if call == "release" {
		op.Kind, fail = history.Release, impl.ErrNotHeld
	}
	op.Result, op.Error = resultOf(err, fail)
	c.env.History.Record(op)
}

func (c *client) setHold(h int64, l *impl.Lease) {
	c.mu.Lock()
	c.holdID, c.lease = h, l
	c.mu.Unlock()
}

func (c *client) setKey(k string) {
	c.mu.Lock()
	c.key = k
	c.mu.Unlock()
}

func (c *client) pickKey() string {
	if c.ownKey != "" {
		return c.ownKey
	}
	if c.cfg.Keys <= 1 {
		return c.cfg.Key(0)
	}
	if c.zipf != nil {
		return c.cfg.Key(int(c.zipf.Uint64()))
	}
	return c.cfg.Key(c.rng.IntN(c.cfg.Keys))
}

func (c *client) now() int64 { return c.env.Clock.Now() }

// record stamps the stream and records op; after an info result the client
// moves to a new stream (its next operation may overlap the unknown one).
func (c *client) record(op history.Operation) {
	op.Client = c.id
	op.Stream = c.stream
	if c.buf != nil {
		c.buf.Record(op)
	} else {
		c.env.History.Record(op)
	}
	if op.Result == history.Info {
		c.stream = c.env.IDs.NextStream()
	}
}

// reasonOf is the reason a failed call's error states (impl.Reason), ""
// for nil.
func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return impl.Reason(err)
}

func resultOf(err error, failErr error) (history.Result, string) {
	switch {
	case err == nil:
		return history.OK, ""
	case errors.Is(err, failErr):
		return history.Fail, err.Error()
	default:
		return history.Info, err.Error()
	}
}

// crash records the client's death at p, marks it dead and kills its
// process, if it runs in one.
func (c *client) crash(key string, hold int64, p Point) {
	c.mu.Lock()
	c.crashed = true
	c.mu.Unlock()
	if c.proc != nil {
		c.proc.Kill()
	}
	t := c.now()
	c.record(history.Operation{Kind: history.Crash, Key: key, Hold: hold, Invoke: t, Complete: t, Result: history.OK, Note: string(p)})
}

// at calls Faults at p; it returns false when the client crashed there.
func (c *client) at(ctx context.Context, p Point, key string, hold int64, l *impl.Lease) bool {
	return c.atCall(ctx, p, key, hold, l, 0, nil)
}

// atCall is at with the reentrancy depth of the call about to be made and
// the call itself (PointBeforeAcquire, PointBeforeRelease).
func (c *client) atCall(ctx context.Context, p Point, key string, hold int64, l *impl.Lease, depth int, call *Call) bool {
	if c.dead != nil && c.dead.Dead() {
		// The adapter process this client shares with others was killed
		// as another client's crash: this client dies with it, here.
		c.crash(key, hold, p)
		return false
	}
	if err := c.env.Faults.At(ctx, Event{Client: c.id, Point: p, Key: key, Hold: hold, Lease: l, Depth: depth, Process: c.proc, Call: call}); errors.Is(err, impl.ErrCrashed) {
		c.crash(key, hold, p)
		return false
	}
	return true
}

// markReady tells the readiness barrier, once, that the client made its
// first call (or stopped before it could). Only the client's own
// goroutine calls it.
func (c *client) markReady() {
	if c.readyDone || c.readyOnce == nil {
		return
	}
	c.readyDone = true
	c.readyOnce()
}

// cancelledReason is the reason recorded for op: the lock's own (reason),
// else cancelled for an unknown outcome of a call a nemesis cancelled in
// flight (a call that completed before the cancel took effect keeps its
// real outcome).
func cancelledReason(op history.Operation, reason string, cancelled bool) string {
	if reason == "" && cancelled && op.Result == history.Info {
		return history.ReasonCancelled
	}
	return reason
}

// errDied is acquire's error when the client crashed at
// PointBeforeAcquire: the crash is recorded, no call was made.
var errDied = errors.New("workload: the client crashed before its call")

// opCtx returns the context of one lock call: OpTimeout from now as its
// deadline, see callContext.
func (c *client) opCtx(ctx context.Context) context.Context {
	return &callContext{Context: ctx, deadline: time.Now().Add(c.cfg.OpTimeout)}
}

// callContext carries a lock call's deadline without a timer of its own.
//
// The deadline bounds the call through the socket deadlines go-redis
// derives from Deadline (the run's clients set ContextTimeoutEnabled): every
// dial, write and read of the call ends by then, whatever the number of
// round trips. Done is the parent's (Ctrl-C), not closed at the deadline;
// Err reports context.DeadlineExceeded once the deadline has passed. Waits
// inside a call that are not socket I/O are bounded on their own: a
// nemesis's hook by its fault's duration, go-redis's pool wait by
// PoolTimeout, a quorum strategy's per-node calls by their own
// context.WithTimeout.
//
// A context.WithTimeout per call started and stopped a runtime timer twice
// per hold: 2.2 µs of lockbench's 12 µs client CPU per command with 50
// clients (lockbench perf, 2026-12-01), the largest cost of the harness
// over a bare go-redis loop.
type callContext struct {
	context.Context
	deadline time.Time
}

// Deadline returns the call's deadline.
func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Err returns the parent's error, else context.DeadlineExceeded once the
// deadline has passed, else nil.
func (c *callContext) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// acquire makes one attempt and records it. depth is the reentrancy depth
// and outer the outermost lease of a nested acquire (nil at depth 1).
// An outermost grant (depth 1) takes a new hold id; nested ones keep hold.
// Faults are told at PointBeforeAcquire first: errDied when the client
// crashed there (recorded; no call made).
func (c *client) acquire(ctx context.Context, key string, hold int64, depth int, outer *impl.Lease) (*impl.Lease, int64, error) {
	if !c.atCall(ctx, PointBeforeAcquire, key, hold, outer, depth, c.call.next()) {
		c.call.finish()
		return nil, 0, errDied
	}
	octx := c.opCtx(c.call.start(ctx))
	rt := c.roundTrips()
	inv := c.now()
	l, err := c.locker.Acquire(octx, key)
	cancelled := c.call.finish()
	c.markReady()
	op := history.Operation{Kind: history.Acquire, Key: key, Depth: depth, Invoke: inv, Complete: c.now(), RoundTrips: c.roundTrips() - rt}
	op.Result, op.Error = resultOf(err, impl.ErrNotAcquired)
	if l == nil {
		// A failed or unknown acquire: the lock's reason, and the token it
		// wrote or tried (a key left with it is this client's orphan).
		op.Reason, op.Token = reasonOf(err), impl.TriedToken(err)
		op.Reason = cancelledReason(op, op.Reason, cancelled)
	}
	if errors.Is(err, impl.ErrCrashed) {
		// The client died inside the call: its outcome is unknown (naive's
		// SETNX took effect before the crash), so it is recorded as info.
		// The caller records the crash after it.
		op.Result, op.Error = history.Info, fmt.Sprintf("client crashed at %s inside the call", c.crashedAt(PointAfterSetNX))
		op.Hold = hold
		c.record(op)
		c.observe(key)
		return nil, 0, err
	}
	if l != nil {
		op.Token, op.Fence, op.Count = l.Token, l.Fence, l.Count
		op.ValidUntil = c.env.Clock.At(l.Validity)
		if depth == 1 {
			hold = c.env.IDs.NextHold()
		}
		op.Hold = hold
	}
	c.record(op)
	if err != nil {
		c.observe(key)
	}
	return l, hold, err
}

// roundTripFunc is the client's impl.Config.RoundTrip: its counter's
// Begin (Env.RoundTrips); nil when round trips are not counted.
func (c *client) roundTripFunc() func() func() {
	if c.env.RoundTrips == nil {
		return nil
	}
	if r := c.env.RoundTrips(c.id); r != nil {
		return r.Begin
	}
	return nil
}

// roundTrips returns the client's round trips so far (Env.RoundTrips);
// 0 when they are not counted.
func (c *client) roundTrips() int {
	if c.env.RoundTrips == nil {
		return 0
	}
	if r := c.env.RoundTrips(c.id); r != nil {
		return int(r.load())
	}
	return 0
}

// release releases one level and records it. It returns false when the
// client crashed: at PointBeforeRelease (no call made), or inside the call
// (at a crash point an adapter declared in its release): the release is
// then recorded as info, then the crash.
func (c *client) release(ctx context.Context, l *impl.Lease, hold int64, depth int) bool {
	if !c.atCall(ctx, PointBeforeRelease, l.Key, hold, l, depth, c.call.next()) {
		c.call.finish()
		return false
	}
	octx := c.opCtx(c.call.start(ctx))
	rt := c.roundTrips()
	inv := c.now()
	rem, err := c.locker.Release(octx, l)
	cancelled := c.call.finish()
	op := history.Operation{Kind: history.Release, Key: l.Key, Hold: hold, Depth: depth, Token: l.Token, Fence: l.Fence, Count: rem, Invoke: inv, Complete: c.now(), RoundTrips: c.roundTrips() - rt}
	op.Result, op.Error = resultOf(err, impl.ErrNotHeld)
	op.Reason = cancelledReason(op, reasonOf(err), cancelled)
	crashed := errors.Is(err, impl.ErrCrashed)
	if crashed {
		op.Error = fmt.Sprintf("client crashed at %s inside the call", c.crashedAt(PointReleased))
	}
	c.record(op)
	if err != nil {
		c.observe(l.Key)
	}
	if errors.Is(err, impl.ErrFatal) {
		c.stopRun(err)
	}
	if crashed {
		c.crash(l.Key, hold, c.crashedAt(PointReleased))
	}
	return !crashed
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// loop runs holds until runCtx ends; ctx (Ctrl-C) bounds every call.
func (c *client) loop(ctx, runCtx context.Context) {
	for runCtx.Err() == nil {
		if !c.hold(ctx, runCtx) {
			return
		}
		sleep(runCtx, c.cfg.Think)
	}
}

// hold acquires (with retries), runs the critical section and releases. It
// returns false when the client crashed.
func (c *client) hold(ctx, runCtx context.Context) bool {
	key := c.pickKey()
	c.setKey(key)
	defer c.setKey("")
	first := time.Now()
	var l *impl.Lease
	var hold int64
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			d, again := c.cfg.Retry.Next(attempt, c.rng)
			if !again {
				return true
			}
			sleep(runCtx, d)
		}
		if runCtx.Err() != nil {
			return true
		}
		var err error
		l, hold, err = c.acquire(ctx, key, 0, 1, nil)
		switch {
		case errors.Is(err, errDied):
			return false
		case err == nil:
			c.attempts[history.OK]++
		case errors.Is(err, impl.ErrCrashed):
			c.crash(key, 0, c.crashedAt(PointAfterSetNX))
			return false
		case errors.Is(err, impl.ErrNotAcquired):
			c.attempts[history.Fail]++
		case errors.Is(err, impl.ErrFatal):
			c.attempts[history.Info]++
			c.stopRun(err)
			return false
		default:
			c.attempts[history.Info]++
		}
		if l != nil {
			break
		}
	}
	granted := time.Now()
	c.grants++
	c.latencies = append(c.latencies, float64(time.Since(first))/float64(time.Millisecond))
	c.setHold(hold, l)
	defer c.setHold(0, nil)
	if l.Lost != nil {
		done := make(chan struct{})
		defer close(done)
		c.watchers.Add(1)
		go c.watchLost(l, hold, done)
	}
	// planned is the time from the grant to the read spent in steps whose
	// length the fault or the lock decides (the nemesis hook, nested
	// acquires); the rest of that time is the harness's own delay.
	t := time.Now()
	if !c.at(ctx, PointAcquired, key, hold, l) {
		return false
	}
	planned := time.Since(t)
	// Nested acquires (reentrant strategies).
	var nested []*impl.Lease
	t = time.Now()
	for d := 2; d <= c.cfg.Reentrancy; d++ {
		nl, _, err := c.acquire(ctx, key, hold, d, l)
		if errors.Is(err, errDied) {
			return false
		}
		if errors.Is(err, impl.ErrCrashed) {
			c.crash(key, hold, c.crashedAt(PointAcquired))
			return false
		}
		if err != nil {
			break
		}
		nested = append(nested, nl)
	}
	planned += time.Since(t)
	c.noteLag(time.Since(granted) - planned)
	ok := c.criticalSection(ctx, key, hold, l)
	if !ok {
		return false
	}
	for i := len(nested) - 1; i >= 0; i-- {
		if !c.release(ctx, nested[i], hold, i+2) {
			return false
		}
	}
	if !c.release(ctx, l, hold, 1) {
		return false
	}
	return c.at(ctx, PointReleased, key, hold, l)
}

// noteLag keeps the largest delay the harness itself added to a hold (see
// Stats.MaxOverrun).
func (c *client) noteLag(d time.Duration) {
	c.maxOverrun = max(c.maxOverrun, d)
}

// watchLost records a lost operation when the strategy signals the lease
// lost before the hold ends (done). It runs beside the client's loop, so it
// records on stream -1, outside the client's stream.
//
// A lost signal up to one TTL after the hold ended (its release or the
// end of the run) is recorded too: a lock must not signal lost for a
// lease it released (the lost check holds it against the lock).
func (c *client) watchLost(l *impl.Lease, hold int64, done <-chan struct{}) {
	defer c.watchers.Done()
	select {
	case <-l.Lost:
	case <-done:
		t := time.NewTimer(c.cfg.TTL)
		defer t.Stop()
		select {
		case <-l.Lost:
		case <-t.C:
			return
		case <-c.stopWatch:
			return
		}
	}
	t := c.now()
	c.env.History.Record(history.Operation{Client: c.id, Stream: -1, Kind: history.Lost, Key: l.Key, Hold: hold, Token: l.Token, Invoke: t, Complete: t, Result: history.OK})
	c.observe(l.Key)
}

// onLostUnheld records the lock's lost signal for a lease it does not
// hold (impl.Config.OnLostUnheld), on stream -1 without a hold.
func (c *client) onLostUnheld(key, token string) {
	t := c.now()
	c.env.History.Record(history.Operation{Client: c.id, Stream: -1, Kind: history.Lost, Key: key, Token: token, Invoke: t, Complete: t, Result: history.OK,
		Note: "for a lease the lock does not hold"})
}

// criticalSection reads the resource, waits, checks the lease under the
// usage policy and writes value+1. It returns false when the client crashed.
func (c *client) criticalSection(ctx context.Context, key string, hold int64, l *impl.Lease) bool {
	res := c.env.Resource
	inv := c.now()
	v, ok := res.Read(key, l.Fence)
	op := history.Operation{Kind: history.Read, Key: key, Hold: hold, Fence: l.Fence, Value: v, Invoke: inv, Complete: c.now(), Result: history.OK}
	if !ok {
		op.Result, op.Error = history.Fail, "rejected: stale fencing token"
	}
	c.record(op)
	if !ok {
		return true
	}
	if !c.at(ctx, PointInCS, key, hold, l) {
		return false
	}
	d := c.cfg.CS.Sample(c.rng)
	t0 := time.Now()
	sleep(ctx, d)
	c.noteLag(time.Since(t0) - d)
	if reason := c.stopReason(l); reason != "" {
		return true // the client gives up its CS without writing
	}
	if c.cfg.Policy.AskLock && c.checker != nil {
		switch ok, alive := c.askLock(ctx, key, hold, l); {
		case !alive:
			return false
		case !ok:
			return true // the lock said not valid, or could not say: no write
		}
	}
	if !c.at(ctx, PointBeforeWrite, key, hold, l) {
		return false
	}
	inv = c.now()
	accepted := res.Write(key, v+1, l.Fence)
	op = history.Operation{Kind: history.Write, Key: key, Hold: hold, Fence: l.Fence, Prev: v, Value: v + 1, Invoke: inv, Complete: c.now(), Result: history.OK}
	if !accepted {
		op.Result, op.Error = history.Fail, "rejected: stale fencing token"
	}
	c.record(op)
	return true
}

// stopReason applies the usage policy before the write: it names why the
// client must stop ("" to go on).
func (c *client) stopReason(l *impl.Lease) string {
	p := c.cfg.Policy
	if p.HonourLost && l.Lost != nil {
		select {
		case <-l.Lost:
			return "lease lost"
		default:
		}
	}
	if v := l.ValidUntil(); p.CheckValidity && !v.IsZero() && c.env.Now().After(v.Add(-c.cfg.SafetyMargin)) {
		return "validity expired"
	}
	return ""
}

// askLock asks the lock, right before the write, whether it still holds
// the lease (impl.Checker; Policy.AskLock) and records its answer as a
// check operation: ok with Value 1 (valid) or 0 (not valid), fail or info
// when it could not say. ok is true only for a valid answer; the client
// must assume it lost the lock otherwise. alive is false when the client
// crashed meanwhile (its adapter process was killed: recorded) or the
// Locker cannot go on (the run stops).
func (c *client) askLock(ctx context.Context, key string, hold int64, l *impl.Lease) (ok, alive bool) {
	octx := c.opCtx(ctx)
	inv := c.now()
	valid, err := c.checker.Check(octx, l)
	op := history.Operation{Kind: history.Check, Key: key, Hold: hold, Token: l.Token, Fence: l.Fence, Invoke: inv, Complete: c.now(),
		ValidUntil: c.env.Clock.At(l.ValidUntil())}
	op.Result, op.Error = resultOf(err, impl.ErrNotHeld)
	op.Reason = reasonOf(err)
	if valid && err == nil {
		op.Value = 1
	}
	crashed := errors.Is(err, impl.ErrCrashed)
	if crashed {
		op.Error = "client crashed during the check"
	}
	c.record(op)
	switch {
	case crashed:
		c.crash(key, hold, PointBeforeWrite)
		return false, false
	case errors.Is(err, impl.ErrFatal):
		c.stopRun(err)
		return false, false
	}
	return op.Value == 1, true
}
