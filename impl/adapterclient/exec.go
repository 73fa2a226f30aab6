package adapterclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/lockbench/lockbench/cluster/clockshim"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/adapter"
	"github.com/lockbench/lockbench/internal/errs"
)

// ExecPrefix starts the name of a strategy that runs any lock as an
// adapter process speaking lockbench's process protocol (docs/protocol.md):
// "exec:COMMAND" (e.g. "exec:python3 adapters/redis-py/adapter.py"), or
// "exec:NAME" with NAME a line of the adapters file (AdaptersFile).
const ExecPrefix = "exec:"

// AdaptersFile is the adapters file that "exec:NAME" looks NAME up in,
// relative to the working folder, unless the environment variable
// AdaptersEnv names another file. Each line is "NAME COMMAND..."; blank
// lines and lines starting with # are skipped.
const AdaptersFile = "adapters/adapters.conf"

// AdaptersEnv is the environment variable that names the adapters file.
const AdaptersEnv = "LOCKBENCH_ADAPTERS"

// IsExec reports whether a strategy name runs an adapter process (ExecPrefix).
func IsExec(name string) bool { return strings.HasPrefix(name, ExecPrefix) }

// ExecOptions configure an exec strategy. Zero values take the defaults
// of the process protocol (docs/protocol.md).
type ExecOptions struct {
	// HelloTimeout bounds the wait for an adapter's hello and init_ok.
	// Default: 30 s.
	HelloTimeout time.Duration
	// Grace is how long past a request's deadline lockbench waits for the
	// reply before it declares the adapter hung. Default: 2 s.
	Grace time.Duration
	// ExitTimeout is how long an adapter has to exit after its stdin
	// closes, and again after SIGTERM, before SIGKILL. Default: 1 s.
	ExitTimeout time.Duration
	// MaxLog is the most bytes of one adapter's stderr kept. Default: 1 MiB.
	MaxLog int64
	// Log receives every adapter's stderr, each line prefixed with its
	// client's owner name; it must be safe for concurrent use (an
	// *os.File is). LogName names it in errors. nil: one temporary file
	// per adapter process, removed when the adapter ends well.
	Log     io.Writer
	LogName string
	// Env are extra environment entries ("NAME=value") every adapter
	// process gets beside lockbench's own environment: the servers' AUTH
	// and TLS (security.Security.Environ; docs/protocol.md).
	Env []string
	// ClockShim, when set, is the path of the clock-offset preload
	// (clockshim.Build) every adapter process is started with
	// (LD_PRELOAD, ahead of any the environment has), each with an offset
	// file of its own in ClockDir (clockshim.OffsetEnv), so a fault can
	// step the wall clock that process reads (ClockStepper). "": none.
	ClockShim string
	// ClockDir is the folder of the offset files, with ClockShim; it must
	// exist. Each process's file is named after its first client's owner
	// (or its group, with threads): one folder per run.
	ClockDir string
}

// execCache holds the strategies Lookup built, by name: Lookup starts an
// adapter once to read its hello, and bench looks a name up many times.
// Entries never change once stored. An adapter that failed to start or
// to say hello is stored too, with its error: looked up again, a silent
// adapter would make the user wait the hello timeout once more for each
// look-up (a run looks a name up several times: 60 s instead of the
// documented 30 s before the error).
var execCache = struct {
	sync.Mutex
	m    map[string]*execStrategy
	errs map[string]error
}{m: map[string]*execStrategy{}, errs: map[string]error{}}

// Lookup returns the strategy of name ("exec:COMMAND" or "exec:NAME", see
// ExecPrefix) with the default options, cached: the first Lookup of a
// name starts the adapter once to read its hello, later ones reuse that
// (an adapter that started and then failed is remembered with its error).
// Errors are Exec's. strategies.Lookup calls it for names with ExecPrefix.
func Lookup(name string) (impl.Strategy, error) {
	execCache.Lock()
	defer execCache.Unlock()
	if s, ok := execCache.m[name]; ok {
		return s, nil
	}
	if err, ok := execCache.errs[name]; ok {
		return nil, err
	}
	s, err := newExec(context.Background(), name, ExecOptions{})
	if err != nil {
		// Only an adapter that started and then failed: one that could
		// not start may be built or installed meanwhile.
		if ae := (*adapter.Error)(nil); errors.As(err, &ae) && !strings.HasPrefix(ae.Problem, "cannot be started") {
			execCache.errs[name] = err
		}
		return nil, err
	}
	execCache.m[name] = s
	return s, nil
}

// Exec returns the strategy of name ("exec:COMMAND" or "exec:NAME", see
// ExecPrefix) with options o, not cached. It starts the adapter once to
// read its hello (name, version, claims, nodes, crash points) and stops
// it. Errors: a name without ExecPrefix, an unreadable adapters file, or
// an adapter that cannot start or whose hello is wrong (wrapping ErrFatal
// and naming the command and the problem).
func Exec(ctx context.Context, name string, o ExecOptions) (impl.Strategy, error) {
	return newExec(ctx, name, o)
}

func newExec(ctx context.Context, name string, o ExecOptions) (*execStrategy, error) {
	if !IsExec(name) {
		return nil, fmt.Errorf("impl: %q is not an exec strategy (want %sCOMMAND or %sNAME)", name, ExecPrefix, ExecPrefix)
	}
	command, named, err := resolveCommand(strings.TrimSpace(strings.TrimPrefix(name, ExecPrefix)))
	if err != nil {
		return nil, err
	}
	s := &execStrategy{name: name, command: command, opts: o}
	p, err := adapter.Start(ctx, s.processOptions(""))
	if err != nil {
		if ae := (*adapter.Error)(nil); errors.As(err, &ae) && strings.HasPrefix(ae.Problem, "cannot be started") && !named && isAdapterName(command) {
			ae.Fix = fmt.Sprintf("%s names no adapter %q either: give one of its names, a command on PATH or the path of an executable file", adaptersFile(), command)
		}
		return nil, fatal(err)
	}
	s.hello = p.Hello()
	s.clock.Steppable, s.clock.Why = clockshim.Reach(p.Pid())
	p.Close()
	return s, nil
}

// fatal returns err (an adapter failure) wrapping ErrFatal, with err's message.
func fatal(err error) error {
	if err != nil && errors.Is(err, adapter.ErrBroken) {
		return errs.New(err.Error(), err, impl.ErrFatal)
	}
	return err
}

// namePattern is what "exec:NAME" may look like for a NAME of the adapters file.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func isAdapterName(s string) bool { return namePattern.MatchString(s) }

// adaptersFile returns the adapters file's path: $LOCKBENCH_ADAPTERS or AdaptersFile.
func adaptersFile() string {
	if f := os.Getenv(AdaptersEnv); f != "" {
		return f
	}
	return AdaptersFile
}

// resolveCommand returns the command of "exec:" + rest: the adapters
// file's command when rest is a NAME listed there (named true), else rest.
func resolveCommand(rest string) (command string, named bool, err error) {
	if rest == "" {
		return "", false, fmt.Errorf("--strategy %s needs a command or an adapter name, e.g. %spython3 adapters/redis-py/adapter.py or %sredis-py", ExecPrefix, ExecPrefix, ExecPrefix)
	}
	if !isAdapterName(rest) {
		return rest, false, nil
	}
	names, err := ReadAdapters(adaptersFile())
	if errors.Is(err, fs.ErrNotExist) {
		return rest, false, nil
	}
	if err != nil {
		return "", false, err
	}
	if c, ok := names[rest]; ok {
		return c, true, nil
	}
	return rest, false, nil
}

// ReadAdapters reads an adapters file (see AdaptersFile): NAME → command.
// Errors name the file and the line (a line without a command, a name used
// twice, a name that is not letters, digits, '.', '_' or '-').
func ReadAdapters(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("impl: adapters file: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, command := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i > 0 {
			name, command = line[:i], strings.TrimSpace(line[i:])
		}
		switch {
		case !isAdapterName(name):
			return nil, fmt.Errorf("impl: %s line %d: adapter name %q: use letters, digits, '.', '_' and '-'", path, n, name)
		case command == "":
			return nil, fmt.Errorf("impl: %s line %d: adapter %s has no command (a line is NAME COMMAND...)", path, n, name)
		case out[name] != "":
			return nil, fmt.Errorf("impl: %s line %d: adapter %s is named twice", path, n, name)
		}
		out[name] = command
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("impl: adapters file %s: %w", path, err)
	}
	return out, nil
}

// WithAdapterLog returns st with its adapters' stderr written to w (named
// name in errors; each line prefixed with the client's owner name) when st
// runs adapter processes, else st unchanged. w must be safe for concurrent
// use (an *os.File is).
func WithAdapterLog(st impl.Strategy, w io.Writer, name string) impl.Strategy {
	s, ok := st.(*execStrategy)
	if !ok {
		return st
	}
	c := *s
	c.opts.Log, c.opts.LogName = w, name
	return &c
}

// WithAdapterEnv returns st with env added to the environment of every
// adapter process it starts (see ExecOptions.Env); st itself when it is
// not an exec: strategy or env is empty.
func WithAdapterEnv(st impl.Strategy, env []string) impl.Strategy {
	s, ok := st.(*execStrategy)
	if !ok || len(env) == 0 {
		return st
	}
	c := *s
	c.opts.Env = append(append([]string(nil), s.opts.Env...), env...)
	return &c
}

// WithAdapterClock returns st with every adapter process it starts
// preloaded with the clock shim at shim, its offset file in dir (see
// ExecOptions.ClockShim), so a fault can step its wall clock
// (ClockStepper); st itself when it is not an exec: strategy or shim is
// "".
func WithAdapterClock(st impl.Strategy, shim, dir string) impl.Strategy {
	s, ok := st.(*execStrategy)
	if !ok || shim == "" {
		return st
	}
	c := *s
	c.opts.ClockShim, c.opts.ClockDir = shim, dir
	return &c
}

// execStrategy runs each client's lock in an adapter process.
type execStrategy struct {
	name    string // as looked up: "exec:..."
	command string // the adapter's command line
	hello   adapter.Hello
	// clock is whether the clock shim reaches the adapter's programs, as
	// found in the process that answered the lookup's hello.
	clock impl.ClockReach
	opts  ExecOptions
	// pool shares the processes of one run among its logical clients
	// (threads above 1); nil outside a run (ForRun).
	pool *procPool
}

// Name returns the name it was looked up by ("exec:...").
func (s *execStrategy) Name() string { return s.name }

// Info describes the adapter from its hello: claims, policy, nodes and
// server as declared, CrashPoint the first of its crash points; Library
// names the adapter, its version and command, and, for an adapter that
// serves several logical clients per process, how many and whether they
// share one lock object.
func (s *execStrategy) Info() impl.Info {
	h := s.hello
	summary := h.Summary
	if summary == "" {
		summary = fmt.Sprintf("%s through an adapter process (lockbench's process protocol)", h.Name)
	}
	lib := h.Name
	if h.Version != "" {
		lib += " " + h.Version
	}
	c := h.Claims
	var crash impl.Point // crash-between's point: the first the adapter declares
	if len(h.CrashPoints) > 0 {
		crash = impl.Point(h.CrashPoints[0])
	}
	adapterNote := "adapter: " + s.command
	if h.Threads > 1 {
		adapterNote += fmt.Sprintf("; %d logical clients per process", h.Threads)
		if h.SharedLock {
			adapterNote += ", sharing one lock object"
		}
	}
	return impl.Info{
		Summary: summary, Source: h.Source, Library: fmt.Sprintf("%s (%s)", lib, adapterNote),
		Claims: impl.Claims{AtomicAcquire: c.AtomicAcquire, TokenRelease: c.TokenRelease, Renewal: c.Renewal,
			Reentrant: c.Reentrant, Quorum: c.Quorum, Fencing: c.Fencing, Validity: c.Validity},
		Policy: impl.Policy{CheckValidity: h.Policy.CheckValidity, HonourLost: h.Policy.HonourLost, AskLock: h.Policy.AskLock},
		Nodes:  h.Nodes, Server: serverOf(h.Server), CrashPoint: crash, ClientClock: s.clock,
	}
}

// serverOf maps a hello's server ("", "redis", "etcd", "zookeeper") to a Server.
func serverOf(s string) impl.Server {
	if s == "redis" {
		return impl.ServerRedis
	}
	return impl.Server(s)
}

func (s *execStrategy) processOptions(owner string) adapter.Options {
	o := adapter.Options{Command: s.command, Log: s.opts.Log, LogName: s.opts.LogName, MaxLog: s.opts.MaxLog,
		HelloTimeout: s.opts.HelloTimeout, Grace: s.opts.Grace, ExitTimeout: s.opts.ExitTimeout, Env: s.opts.Env}
	if owner != "" {
		o.LogPrefix = owner + " "
	}
	return o
}

// ForRun returns a copy of s for one run: with threads above 1, the
// Lockers New makes for that run share adapter processes (client k of
// the run, Config.Client, in process k/threads), each process started by
// its first client and ended when its last client's Locker closes. A
// strategy not made by ForRun starts one process per Locker.
func (s *execStrategy) ForRun() impl.Strategy {
	c := *s
	if s.hello.Threads > 1 {
		c.pool = &procPool{procs: map[int]*execProc{}}
	}
	return &c
}

// procPool holds one run's shared adapter processes, by group (Config.Client/threads).
type procPool struct {
	mu    sync.Mutex
	procs map[int]*execProc
}

// execProc is one adapter process and the logical clients it serves.
type execProc struct {
	ready chan struct{} // closed once proc or err is set
	proc  *adapter.Process
	err   error

	mu      sync.Mutex
	clients map[string]*execLocker // owner → Locker, for lost events
	refs    int
	pool    *procPool // nil: not shared
	group   int

	// clockFile is the process's clock offset file when it runs with the
	// clock shim (ExecOptions.ClockShim), else ""; clockErr is set when
	// the shim is not mapped into it (checked once it said hello).
	clockFile string
	clockErr  error
	clockMu   sync.Mutex // one step at a time
}

// onLost routes a lost event to the Locker of the logical client it
// names (the only one when it names none).
func (p *execProc) onLost(client, key, token string) {
	p.mu.Lock()
	l := p.clients[client]
	if l == nil && client == "" && len(p.clients) == 1 {
		for _, only := range p.clients {
			l = only
		}
	}
	p.mu.Unlock()
	if l != nil {
		l.onLost(key, token)
	}
}

// New starts the adapter process of one client (or, with threads, joins
// the process its group shares: see ForRun), checks that its hello matches
// the one Lookup read, and sends it init (cfg.Endpoints, cfg.TTL,
// cfg.Owner). cfg.Nodes are not used: the adapter dials Endpoints itself,
// through the proxies a scenario puts there. Errors: missing Endpoints,
// TTL or Owner, or an adapter failure (wrapping ErrFatal).
func (s *execStrategy) New(cfg impl.Config) (impl.Locker, error) {
	switch {
	case len(cfg.Endpoints) < s.hello.Nodes:
		return nil, fmt.Errorf("%s: config: the adapter needs %d server address(es) (Config.Endpoints), got %d: it dials the servers itself, so scenarios that give no addresses (Sentinel failover) cannot run it", s.hello.Name, s.hello.Nodes, len(cfg.Endpoints))
	case cfg.TTL < time.Millisecond:
		return nil, fmt.Errorf("%s: config: TTL %v is below 1ms", s.hello.Name, cfg.TTL)
	case cfg.Owner == "":
		return nil, fmt.Errorf("%s: config: empty Owner", s.hello.Name)
	}
	cfg = cfg.WithDefaults()
	l := &execLocker{s: s, cfg: cfg, lost: map[string]chan struct{}{}}
	if s.hello.Protocol >= 2 {
		l.client = cfg.Owner
	}
	ep, err := s.process(cfg)
	if err != nil {
		return nil, err
	}
	ep.mu.Lock()
	ep.clients[l.client] = l
	ep.mu.Unlock()
	if err := ep.proc.Init(context.Background(), cfg.Endpoints[:s.hello.Nodes], cfg.TTL, cfg.Owner); err != nil {
		l.ep = ep
		l.release()
		return nil, fatal(err)
	}
	l.ep, l.proc = ep, ep.proc
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

// process returns the adapter process cfg's client uses, started if need
// be and counted as one more user: its own, or its group's when s is a
// run's (ForRun) and the adapter serves threads.
func (s *execStrategy) process(cfg impl.Config) (*execProc, error) {
	var ep *execProc
	if s.pool != nil && cfg.Client >= 0 {
		group := cfg.Client / s.hello.Threads
		s.pool.mu.Lock()
		ep = s.pool.procs[group]
		if ep == nil {
			ep = &execProc{ready: make(chan struct{}), clients: map[string]*execLocker{}, pool: s.pool, group: group}
			s.pool.procs[group] = ep
			go ep.start(s, fmt.Sprintf("p%d", group))
		}
		ep.refs++
		s.pool.mu.Unlock()
	} else {
		ep = &execProc{ready: make(chan struct{}), clients: map[string]*execLocker{}, refs: 1}
		ep.start(s, cfg.Owner)
	}
	<-ep.ready
	if ep.err != nil {
		ep.drop()
		return nil, ep.err
	}
	return ep, nil
}

// start starts the adapter process (its log lines prefixed with prefix)
// and closes ep.ready.
func (ep *execProc) start(s *execStrategy, prefix string) {
	defer close(ep.ready)
	o := s.processOptions(prefix)
	if s.hello.Claims.Renewal && !s.hello.Extend {
		o.OnLost = ep.onLost
	}
	if s.opts.ClockShim != "" {
		ep.clockFile = filepath.Join(s.opts.ClockDir, "clock-offset-"+fileSafe(prefix))
		if err := clockshim.WriteOffset(ep.clockFile, 0); err != nil {
			ep.err = fmt.Errorf("impl: adapter %q: %w", s.command, err)
			return
		}
		preload := s.opts.ClockShim
		if prev := os.Getenv("LD_PRELOAD"); prev != "" {
			preload += " " + prev
		}
		o.Env = append(slices.Clone(o.Env), "LD_PRELOAD="+preload, clockshim.OffsetEnv+"="+ep.clockFile)
	}
	p, err := adapter.Start(context.Background(), o)
	if err != nil {
		ep.err = fatal(err)
		return
	}
	if ep.clockFile != "" {
		ep.clockErr = clockshim.CheckPreloaded(p.Pid(), s.opts.ClockShim)
	}
	if h := p.Hello(); !sameHello(h, s.hello) {
		p.Close()
		ep.err = errs.New(fmt.Sprintf("adapter %q declared %+v at lookup but %+v for client %s: an adapter's hello must not change", s.command, s.hello, h, prefix), impl.ErrFatal)
		return
	}
	ep.proc = p
}

// drop counts one user less; the last one closes the process (and takes it
// out of its pool). It returns Close's error.
func (ep *execProc) drop() error {
	last := false
	if ep.pool != nil {
		ep.pool.mu.Lock()
		ep.refs--
		if last = ep.refs == 0; last {
			delete(ep.pool.procs, ep.group)
		}
		ep.pool.mu.Unlock()
	} else {
		ep.refs--
		last = ep.refs == 0
	}
	if !last || ep.proc == nil {
		return nil
	}
	return ep.proc.Close()
}

// sameHello reports whether two hellos declare the same lock.
func sameHello(a, b adapter.Hello) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Claims == b.Claims && a.Policy == b.Policy &&
		a.Nodes == b.Nodes && a.Server == b.Server && a.Extend == b.Extend && slices.Equal(a.CrashPoints, b.CrashPoints) &&
		a.Protocol == b.Protocol && a.Check == b.Check && a.Threads == b.Threads && a.SharedLock == b.SharedLock && a.Cancel == b.Cancel
}

// execLocker is one logical client of an adapter process.
type execLocker struct {
	s      *execStrategy
	cfg    impl.Config
	ep     *execProc
	proc   *adapter.Process
	client string // the client field of its requests (protocol 2): its owner; "" for protocol 1
	// ctx ends at Close; renewals (extend requests) run under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	lost map[string]chan struct{} // token → Lease.Lost, for adapters that renew by themselves
}

// release takes the Locker out of its process and drops its use of it.
func (l *execLocker) release() error {
	l.ep.mu.Lock()
	if l.ep.clients[l.client] == l {
		delete(l.ep.clients, l.client)
	}
	l.ep.mu.Unlock()
	return l.ep.drop()
}

// deadlineOf returns ctx's deadline, or TTL from now when it has none.
func (l *execLocker) deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(l.cfg.TTL)
}

// onPoint passes an adapter's point to the Hook: ErrCrashed kills the
// adapter there; any other hook error lets it go on.
func (l *execLocker) onPoint(ctx context.Context) func(string) error {
	return func(p string) error {
		if l.cfg.Hook == nil {
			return nil
		}
		if err := l.cfg.Hook(ctx, impl.Point(p)); errors.Is(err, impl.ErrCrashed) {
			return impl.ErrCrashed
		}
		return nil
	}
}

// call sends one request for this logical client.
func (l *execLocker) call(ctx context.Context, m adapter.Message, onPoint func(string) error) (adapter.Message, error) {
	m.Client = l.client
	return l.proc.Call(ctx, m, l.deadlineOf(ctx), onPoint)
}

// callErr maps an error of Process.Call: a crash at a point or after Kill
// is ErrCrashed, an adapter failure wraps ErrFatal, a request abandoned
// in flight (a cancel fault, the adapter not serving cancel) wraps
// ErrCancelled with reason cancelled, others (Ctrl-C) stay.
func (l *execLocker) callErr(call, key string, err error) error {
	switch {
	case errors.Is(err, impl.ErrCrashed), errors.Is(err, adapter.ErrKilled):
		return impl.ErrCrashed
	case errors.Is(err, adapter.ErrBroken):
		return fatal(err)
	}
	return fmt.Errorf("%s: %s %q: %w", l.s.hello.Name, call, key, err)
}

// replyErr is the error of a fail (wrapping definite) or unknown reply,
// with the reason the reply states (protocol 2).
func (l *execLocker) replyErr(call, key string, r adapter.Message, definite error) error {
	text := r.Error
	var err error
	switch {
	case r.Type == adapter.TypeFail && text == "":
		err = fmt.Errorf("%s: %s %q: %w", l.s.hello.Name, call, key, definite)
	case r.Type == adapter.TypeFail:
		err = fmt.Errorf("%s: %s %q: %s: %w", l.s.hello.Name, call, key, text, definite)
	default:
		if text == "" {
			text = "outcome unknown"
		}
		err = fmt.Errorf("%s: %s %q: %s", l.s.hello.Name, call, key, text)
	}
	if l.s.hello.Protocol >= 2 {
		err = impl.WithReason(err, r.Reason)
	}
	return err
}

// Acquire sends an acquire request: a lease (token, fence, count and
// validity as the adapter replied; Validity is validity_ms after the
// reply arrived, on cfg.Now), ErrNotAcquired (fail), ErrCrashed (killed
// at a crash point), an error wrapping ErrFatal (the adapter broke), or
// another error (unknown). A fail or unknown reply's reason and token
// (protocol 2) ride on the error (Reason, TriedToken). With renewal the
// lease gets Lost: from the adapter's lost events, or from lockbench's own
// extend requests every RenewEvery when the adapter serves extend.
func (l *execLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	start := l.cfg.Now()
	r, err := l.call(ctx, adapter.Message{Type: adapter.TypeAcquire, Key: key}, l.onPoint(ctx))
	end := l.cfg.Now()
	if err != nil {
		return nil, l.callErr("acquire", key, err)
	}
	if r.Type != adapter.TypeOK {
		err := l.replyErr("acquire", key, r, impl.ErrNotAcquired)
		if l.s.hello.Protocol >= 2 {
			err = impl.WithToken(err, r.Token)
		}
		return nil, err
	}
	lease := &impl.Lease{Key: key, Token: r.Token, Fence: r.Fence, Count: r.Count, Start: start, End: end}
	if r.ValidityMs != nil {
		lease.Validity = end.Add(msDuration(*r.ValidityMs))
	}
	switch h := l.s.hello; {
	case h.Claims.Renewal && h.Extend:
		impl.DriveRenewal(l.ctx, &l.wg, l.cfg, lease, func(ctx context.Context) (time.Duration, error) {
			return l.extend(ctx, lease)
		})
	case h.Claims.Renewal:
		ch := make(chan struct{})
		l.mu.Lock()
		l.lost[lease.Token] = ch
		l.mu.Unlock()
		lease.Lost = ch
	}
	return lease, nil
}

// msDuration converts a protocol's milliseconds to a Duration.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// extend sends one extend request: the validity the reply states (0 when
// none), nil (ok), an error wrapping ErrNotHeld (fail), or another error
// (unknown, or the adapter failed); errors carry the reply's reason.
func (l *execLocker) extend(ctx context.Context, lease *impl.Lease) (time.Duration, error) {
	r, err := l.call(ctx, adapter.Message{Type: adapter.TypeExtend, Key: lease.Key, Token: lease.Token}, nil)
	switch {
	case err != nil:
		return 0, l.callErr("extend", lease.Key, err)
	case r.Type != adapter.TypeOK:
		return 0, l.replyErr("extend", lease.Key, r, impl.ErrNotHeld)
	case l.s.hello.Protocol >= 2 && r.ValidityMs != nil:
		return max(msDuration(*r.ValidityMs), time.Nanosecond), nil
	}
	return 0, nil
}

// Extend sends one extend request for lease (Extender): nil, moving the
// lease's validity (ValidUntil) when the reply states one; ErrNotHeld
// (fail); or another error (unknown). Only for adapters that serve extend.
func (l *execLocker) Extend(ctx context.Context, lease *impl.Lease) error {
	if !l.s.hello.Extend {
		return fmt.Errorf("%s: extend %q: the adapter does not serve extend", l.s.hello.Name, lease.Key)
	}
	v, err := l.extend(ctx, lease)
	if err == nil && v > 0 {
		lease.SetValidUntil(l.cfg.Now().Add(v))
	}
	return err
}

// Check asks the adapter whether it still holds lease (Checker; protocol
// 2 adapters that declare check): its answer, moving the lease's validity
// when the reply states one, or an error when it could not say (a fail or
// unknown reply, carrying its reason; ErrCrashed; a broken adapter).
func (l *execLocker) Check(ctx context.Context, lease *impl.Lease) (bool, error) {
	if !l.s.hello.Check {
		return false, fmt.Errorf("%s: check %q: the adapter does not serve check", l.s.hello.Name, lease.Key)
	}
	r, err := l.call(ctx, adapter.Message{Type: adapter.TypeCheck, Key: lease.Key, Token: lease.Token}, nil)
	switch {
	case err != nil:
		return false, l.callErr("check", lease.Key, err)
	case r.Type != adapter.TypeOK:
		return false, l.replyErr("check", lease.Key, r, impl.ErrNotHeld)
	}
	if r.ValidityMs != nil && *r.Valid {
		lease.SetValidUntil(l.cfg.Now().Add(msDuration(*r.ValidityMs)))
	}
	return *r.Valid, nil
}

// onLost closes the Lost channel of the lease with token (a lost event);
// a lost event for a lease it does not hold (released, or never granted)
// goes to cfg.OnLostUnheld.
func (l *execLocker) onLost(key, token string) {
	l.mu.Lock()
	ch, ok := l.lost[token]
	if ok {
		close(ch)
		delete(l.lost, token)
	}
	l.mu.Unlock()
	if !ok && l.cfg.OnLostUnheld != nil {
		l.cfg.OnLostUnheld(key, token)
	}
}

// Release stops the lease's renewal and sends a release request: the
// remaining reentrancy count, ErrNotHeld (fail), ErrCrashed, an error
// wrapping ErrFatal, or another error (unknown); errors carry the reply's
// reason (protocol 2).
func (l *execLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	if lease == nil {
		return 0, fmt.Errorf("%s: release of a nil lease: %w", l.s.hello.Name, impl.ErrNotHeld)
	}
	lease.StopRenewal()
	r, err := l.call(ctx, adapter.Message{Type: adapter.TypeRelease, Key: lease.Key, Token: lease.Token}, l.onPoint(ctx))
	if r.Type == adapter.TypeOK && (lease.Count <= 1 || r.Remaining == 0) {
		l.mu.Lock()
		delete(l.lost, lease.Token)
		l.mu.Unlock()
	}
	if err != nil {
		return 0, l.callErr("release", lease.Key, err)
	}
	if r.Type != adapter.TypeOK {
		return 0, l.replyErr("release", lease.Key, r, impl.ErrNotHeld)
	}
	return r.Remaining, nil
}

// Close stops the renewals and, when it is the last logical client of its
// process, ends the adapter (its stdin closed, then SIGTERM, then SIGKILL;
// see ExecOptions.ExitTimeout). It returns an error when the adapter had
// to be killed.
func (l *execLocker) Close() error {
	l.cancel()
	l.wg.Wait()
	return fatal(l.release())
}

// Pause stops the adapter process (SIGSTOP), its renewal threads included:
// every logical client it serves.
func (l *execLocker) Pause() error { return l.proc.Pause() }

// Resume continues the adapter process (SIGCONT).
func (l *execLocker) Resume() error { return l.proc.Resume() }

// Kill kills the adapter process (SIGKILL) as a client crash: every
// logical client it serves crashes with it.
func (l *execLocker) Kill() error { return l.proc.Kill() }

// Dead reports whether the Locker's adapter process was killed as a
// client crash: its own, or, with threads, that of another logical client
// of the same process (which dies with it).
func (l *execLocker) Dead() bool { return l.proc.Killed() }

// Pid returns the adapter process's id.
func (l *execLocker) Pid() int { return l.proc.Pid() }

// StepClock moves the wall clock of the Locker's adapter process (every
// logical client it serves) by step from its offset file's offset
// (ClockStepper): it writes the file, reads it back and checks the
// preload is mapped.
func (l *execLocker) StepClock(step time.Duration) (time.Duration, string, error) {
	ep, pid := l.ep, l.proc.Pid()
	fail := func(err error) (time.Duration, string, error) {
		return 0, "", fmt.Errorf("%s: adapter pid %d: %w", l.s.hello.Name, pid, err)
	}
	switch {
	case ep.clockFile == "":
		return fail(errors.New("started without the clock shim (WithAdapterClock)"))
	case ep.clockErr != nil:
		return fail(ep.clockErr)
	}
	ep.clockMu.Lock()
	defer ep.clockMu.Unlock()
	was, err := clockshim.ReadOffset(ep.clockFile)
	if err != nil {
		return fail(err)
	}
	d := was + step
	if err := clockshim.WriteOffset(ep.clockFile, d); err != nil {
		return fail(err)
	}
	back, err := clockshim.ReadOffset(ep.clockFile)
	if err != nil {
		return fail(err)
	}
	if back != d {
		return fail(fmt.Errorf("its clock offset file reads %d ns after %d ns was written", back, d))
	}
	if err := clockshim.CheckPreloaded(pid, l.s.opts.ClockShim); err != nil {
		return fail(err)
	}
	return d, fmt.Sprintf("pid %d wall clock offset %v → %v (offset file reads %d ns; clock shim mapped)", pid, was, d, back), nil
}

// ClockSeen returns the offset the adapter process last applied to a read
// of its wall clock after a change (ClockStepper); false when none, or
// when it runs without the clock shim.
func (l *execLocker) ClockSeen() (time.Duration, bool) {
	if l.ep.clockFile == "" {
		return 0, false
	}
	d, ok, err := clockshim.Seen(l.ep.clockFile)
	return d, ok && err == nil
}

// fileSafe makes s usable as a file name: every byte that is not a
// letter, a digit, '-', '_' or '.' becomes '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return r
		}
		return '_'
	}, s)
}

// Shared reports how many logical clients the Locker's process serves (1
// unless the adapter declares threads and the run shares its processes).
func (l *execLocker) Shared() int {
	l.ep.mu.Lock()
	defer l.ep.mu.Unlock()
	return len(l.ep.clients)
}
