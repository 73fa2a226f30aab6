package adapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/shlex"
)

// Defaults of Options.
const (
	DefaultHelloTimeout = 30 * time.Second
	DefaultGrace        = 2 * time.Second
	DefaultExitTimeout  = time.Second
	DefaultMaxLog       = 1 << 20
)

// maxLine is the longest protocol line lockbench reads (1 MiB).
const maxLine = 1 << 20

// ErrBroken is wrapped by every *Error: the adapter failed to start, died,
// hung past a deadline or broke the protocol. The process is gone when it
// is returned.
var ErrBroken = errors.New("adapter: broken")

// ErrKilled is returned by calls on a Process that Kill ended (a client
// crash placed by a fault): no further call can be made.
var ErrKilled = errors.New("adapter: killed as a client crash")

// Error is an adapter failure: which adapter, what it did, the offending
// stdout line and its last stderr line. Its message is one line.
type Error struct {
	// Command is the adapter's command line.
	Command string
	// Problem says what went wrong (and the fix where there is one), e.g.
	// "exited with exit status 1 before its hello".
	Problem string
	// Line is the offending stdout line, if any.
	Line string
	// Stderr is the adapter's last stderr line, if any.
	Stderr string
	// Log is the file holding the adapter's stderr.
	Log string
	// Fix is what to do about it, when the problem does not say, e.g.
	// "run the command by hand to see why".
	Fix string
}

// Error returns the one-line message: the command, the problem, the line
// and the last stderr line (each quoted and cut at 200 bytes), the log.
func (e *Error) Error() string {
	s := fmt.Sprintf("adapter %q %s", e.Command, e.Problem)
	if e.Line != "" {
		s += ": line " + short(e.Line)
	}
	if e.Stderr != "" {
		s += "; its last stderr line: " + short(e.Stderr)
	}
	if e.Log != "" {
		s += "; its log: " + e.Log
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Unwrap returns ErrBroken.
func (e *Error) Unwrap() error { return ErrBroken }

// short quotes s, cut at 200 bytes.
func short(s string) string {
	const n = 200
	if len(s) > n {
		return strconv.Quote(s[:n]) + "…"
	}
	return strconv.Quote(s)
}

// Options configure Start. Zero values take the defaults.
type Options struct {
	// Command is the adapter's command line, split into words as a shell
	// does (quotes and backslashes; no variables, pipes or redirections:
	// wrap those in sh -c '...'). Required.
	Command string
	// Dir is the adapter's working folder; "": lockbench's.
	Dir string
	// Log receives the adapter's stderr, one Write per line, each line
	// prefixed with LogPrefix, and lockbench's notes about the adapter
	// ("lockbench: ..."). It must be safe for concurrent use (an *os.File
	// is). nil: a temporary file, named in errors, removed by Close unless
	// the adapter failed.
	Log io.Writer
	// LogName names Log in errors (e.g. its path); "": not named.
	LogName string
	// LogPrefix starts every log line, e.g. "c3 ".
	LogPrefix string
	// MaxLog is the most bytes of stderr written to Log per process; the
	// rest is read and dropped, with one line saying so. Default: 1 MiB.
	MaxLog int64
	// HelloTimeout bounds the wait for the hello and for init_ok.
	// Default: 30 s (ten Python interpreters starting at once on 2 busy cores took more than 10 s).
	HelloTimeout time.Duration
	// Grace is how long past a request's deadline lockbench waits for its
	// reply before it declares the adapter hung and kills it (time the
	// process spends paused does not count). Default: 2 s.
	Grace time.Duration
	// ExitTimeout is how long Close waits for the adapter to exit after
	// closing its stdin, and again after SIGTERM, before SIGKILL.
	// Default: 1 s.
	ExitTimeout time.Duration
	// Env are extra environment entries ("NAME=value") the adapter gets
	// beside lockbench's own environment (later entries win).
	Env []string
	// OnLost, if set, is told of every lost event: the logical client it
	// names (protocol 2's client field; "" when it names none), key and
	// token. It runs on the goroutine that reads the adapter's stdout and
	// must not block.
	OnLost func(client, key, token string)
}

func (o Options) withDefaults() Options {
	if o.HelloTimeout <= 0 {
		o.HelloTimeout = DefaultHelloTimeout
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.ExitTimeout <= 0 {
		o.ExitTimeout = DefaultExitTimeout
	}
	if o.MaxLog <= 0 {
		o.MaxLog = DefaultMaxLog
	}
	return o
}

// Process is one running adapter: one logical client of a run, or with
// protocol 2's threads several (one Init each; requests name theirs in
// Message.Client). Call may be used from several goroutines at once
// (replies are matched by id); Pause, Resume, Kill and Close from any
// goroutine, and they act on the whole process.
type Process struct {
	opts  Options
	cmd   *exec.Cmd
	hello Hello
	stdin *os.File
	wmu   sync.Mutex // one line at a time on stdin
	// tmpLog is the temporary log file when Options.Log is nil.
	tmpLog *os.File
	// stdout and stderr are lockbench's ends of the adapter's output pipes.
	stdout, stderr *os.File

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]chan Message // requests awaiting their reply
	abandoned map[int64]bool         // requests whose caller gave up (Ctrl-C): late replies are ignored
	cancels   map[int64]bool         // cancel requests: their replies are dropped
	failure   *Error                 // the first failure; set once
	killed    bool                   // Kill was called
	closing   bool                   // Close was called
	paused    bool
	pausedAt  time.Time
	pausedSum time.Duration // time spent paused, up to the last Resume
	lastErr   string        // the last stderr line

	helloCh    chan Message  // the first stdout message
	dead       chan struct{} // closed once the process failed, was killed or closed
	deadOnce   sync.Once
	exited     chan struct{} // closed when Wait returned
	waitErr    error
	stderrDone chan struct{}
	readerDone chan struct{}
}

// Start launches the adapter, reads its hello and checks it. The process
// runs in its own process group with Pdeathsig SIGKILL (it dies with
// lockbench) and must exit when its stdin closes. Errors are *Error
// (wrapping ErrBroken) naming the command and the problem, or ctx's error;
// no process is left behind on error.
func Start(ctx context.Context, o Options) (*Process, error) {
	o = o.withDefaults()
	argv, err := shlex.Split(o.Command)
	if err != nil || len(argv) == 0 {
		why := "is empty: give the adapter's command line, e.g. exec:python3 adapters/redis-py/adapter.py"
		if err != nil {
			why = fmt.Sprintf("cannot be split into words (%v): check its quotes", err)
		}
		return nil, &Error{Command: o.Command, Problem: why}
	}
	p := &Process{opts: o, pending: map[int64]chan Message{}, abandoned: map[int64]bool{}, cancels: map[int64]bool{},
		helloCh: make(chan Message, 1), dead: make(chan struct{}), exited: make(chan struct{}),
		stderrDone: make(chan struct{}), readerDone: make(chan struct{})}
	if o.Log == nil {
		f, err := os.CreateTemp("", "lockbench-adapter-*.log")
		if err != nil {
			return nil, fmt.Errorf("adapter: a temporary log file: %w", err)
		}
		p.tmpLog, p.opts.Log, p.opts.LogName = f, f, f.Name()
	}
	var files []*os.File // the pipe ends this process must close
	pipe := func() (r, w *os.File) {
		if err == nil {
			r, w, err = os.Pipe()
			files = append(files, r, w)
		}
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		p.removeLog()
		return nil, fmt.Errorf("adapter: pipes: %w", err)
	}
	p.stdin, p.stdout, p.stderr = inW, outR, errR
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.cmd = cmd
	started := time.Now()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		p.removeLog()
		return nil, &Error{Command: o.Command, Problem: "cannot be started: " + err.Error(), Fix: startFix(err)}
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
		p.killGroup() // children it left behind
	}()
	go p.readStderr(errR)
	go p.readStdout(outR)

	timer := time.NewTimer(o.HelloTimeout)
	defer timer.Stop()
	select {
	case m := <-p.helloCh:
		h, problem := helloOf(m)
		if problem != "" {
			line, _ := json.Marshal(m)
			p.fail(&Error{Problem: problem, Line: string(line)})
			break
		}
		p.hello = h
		return p, nil
	case <-p.dead:
	case <-timer.C:
		// The message states the timeout and the wait measured from the
		// start (a busy machine may add a little to it).
		p.fail(&Error{Problem: fmt.Sprintf("wrote no hello within %v (waited %.1fs; is it the right command? an adapter writes its hello at once)", o.HelloTimeout, time.Since(started).Seconds())})
	case <-ctx.Done():
		p.Close()
		return nil, ctx.Err()
	}
	err = p.err()
	p.Close()
	return nil, err
}

// Hello returns the adapter's declaration.
func (p *Process) Hello() Hello { return p.hello }

// Pid returns the adapter's process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Command returns the adapter's command line.
func (p *Process) Command() string { return p.opts.Command }

// Init sends init (the client's server addresses, TTL and owner name) and
// waits for init_ok, at most Options.HelloTimeout. An adapter serving
// threads gets one Init per logical client. Errors are *Error or ctx's
// error.
func (p *Process) Init(ctx context.Context, endpoints []string, ttl time.Duration, owner string) error {
	m := Message{Type: TypeInit, Endpoints: endpoints, TTLMs: ttl.Milliseconds(), Owner: owner}
	reply, err := p.call(ctx, m, time.Now().Add(p.opts.HelloTimeout), 0, nil)
	if err != nil {
		return err
	}
	if reply.Type != TypeInitOK {
		what := fmt.Sprintf("answered init with a %q message (init_ok)", reply.Type)
		if reply.Error != "" {
			what += ": " + reply.Error
		}
		line, _ := json.Marshal(reply)
		return p.fail(&Error{Problem: what, Line: string(line)})
	}
	return nil
}

// Call sends request m (TypeAcquire, TypeRelease, TypeExtend, TypeCheck or
// TypePing; Call sets its ID and DeadlineMs from deadline) and returns the
// reply: ok, fail or unknown, checked against the hello (CheckReply).
// While the request runs, each point event calls onPoint (nil: continue at
// every point): nil lets the adapter go on; an error asks the adapter to
// crash there (a crash message; it must exit at once, and its process
// group is killed after it) and Call returns that error, or an *Error when
// the adapter went on instead.
//
// ctx's deadline alone does not end the wait (deadline does). When ctx is
// cancelled with a cause (context.WithCancelCause: a nemesis's cancel
// fault), the request is cancelled in flight: an adapter that declares
// cancel is sent a cancel request and Call returns its answer to m (an
// unknown reply with reason cancelled, or m's real outcome), which must
// still come by m's deadline plus Options.Grace; otherwise lockbench abandons m (its late reply
// is ignored) and Call returns an error wrapping the cause. A plain
// cancellation (Ctrl-C) abandons m and returns ctx's error. Other errors:
// ErrKilled, or an *Error: the adapter died, hung past deadline +
// Options.Grace, or broke the protocol; it is then killed.
func (p *Process) Call(ctx context.Context, m Message, deadline time.Time, onPoint func(point string) error) (Message, error) {
	return p.call(ctx, m, deadline, p.opts.Grace, onPoint)
}

// call is Call with the grace given: 0 for init, whose deadline includes it.
func (p *Process) call(ctx context.Context, m Message, deadline time.Time, grace time.Duration, onPoint func(string) error) (Message, error) {
	ch := make(chan Message, 4)
	p.mu.Lock()
	if err := p.errLocked(); err != nil {
		p.mu.Unlock()
		return Message{}, err
	}
	p.nextID++
	m.ID = p.nextID
	p.pending[m.ID] = ch
	start, paused0 := time.Now(), p.pausedLocked(time.Now())
	p.mu.Unlock()
	if m.Type != TypeInit {
		m.DeadlineMs = max(0, float64(time.Until(deadline).Microseconds())/1000)
	}
	if err := p.send(m); err != nil {
		return Message{}, err
	}
	limit := deadline.Add(grace)
	timer := time.NewTimer(time.Until(limit))
	defer timer.Stop()
	// ctx's deadline is the request's: the adapter answers unknown when it
	// runs out, so only a cancelled ctx (Ctrl-C, a cancel fault) stops the
	// wait early.
	done := ctx.Done()
	for {
		select {
		case r := <-ch:
			if r.Type == TypePoint {
				if err := p.atPoint(r, ch, onPoint); err != nil {
					return Message{}, err
				}
				continue
			}
			if m.Type == TypeInit {
				return r, nil
			}
			if problem := CheckReply(m.Type, r, p.hello); problem != "" {
				line, _ := json.Marshal(r)
				return Message{}, p.fail(&Error{Problem: problem, Line: string(line)})
			}
			return r, nil
		case <-p.dead:
			return Message{}, p.err()
		case <-done:
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				done = nil // wait for the reply until deadline + grace
				continue
			}
			cause := context.Cause(ctx)
			if cause == ctx.Err() || m.Type == TypeInit { // Ctrl-C
				p.abandon(m.ID)
				return Message{}, ctx.Err()
			}
			if !p.hello.Cancel {
				p.abandon(m.ID)
				p.note("gave up waiting for %s (id %d): %v (the adapter does not serve cancel)", m.Type, m.ID, cause)
				return Message{}, fmt.Errorf("adapter %q: %s (id %d) abandoned in flight: %w", p.opts.Command, m.Type, m.ID, cause)
			}
			if err := p.sendCancel(m); err != nil {
				return Message{}, err
			}
			done = nil // its answer to m comes by m's deadline, as ever
		case now := <-timer.C:
			// Time the process spent paused since the call started does
			// not count against its deadline.
			p.mu.Lock()
			paused, stopped := p.pausedLocked(now)-paused0, p.paused
			p.mu.Unlock()
			if left := limit.Add(paused).Sub(now); stopped || left > 0 {
				if stopped {
					left = max(left, grace)
				}
				timer.Reset(max(left, time.Millisecond))
				continue
			}
			what := fmt.Sprintf("did not answer %s (id %d) within its deadline of %v plus %v grace (waited %v): it must answer unknown when its call runs out of time",
				m.Type, m.ID, deadline.Sub(start).Round(time.Millisecond), grace, now.Sub(start).Round(time.Millisecond))
			if m.Type == TypeInit {
				what = fmt.Sprintf("did not answer init (id %d) within %v", m.ID, p.opts.HelloTimeout)
			}
			return Message{}, p.fail(&Error{Problem: what})
		}
	}
}

// atPoint handles a point event of a running request: a declared crash
// point is passed to onPoint. nil: lockbench answers continue. An error:
// lockbench answers crash, asking the adapter to exit there at once (see
// crashAt), and returns the error.
func (p *Process) atPoint(r Message, ch <-chan Message, onPoint func(string) error) error {
	declared := false
	for _, c := range p.hello.CrashPoints {
		declared = declared || c == r.Point
	}
	if !declared {
		line, _ := json.Marshal(r)
		return p.fail(&Error{Problem: fmt.Sprintf("stopped at point %q, which its hello does not declare in crash_points", r.Point), Line: string(line)})
	}
	if onPoint != nil {
		if err := onPoint(r.Point); err != nil {
			if ferr := p.crashAt(r, ch); ferr != nil {
				return ferr
			}
			return err
		}
	}
	return p.send(Message{Type: TypeContinue, InReplyTo: r.InReplyTo})
}

// crashAt asks the adapter, stopped at point r.Point, to crash there: it
// sends crash and waits up to Options.ExitTimeout for the process to exit
// by itself; then it kills what is left of its process group (SIGKILL:
// children too), as Kill does. An adapter that goes on instead (it answers
// the request, or is still running after ExitTimeout) did not crash at its
// point: that is a broken adapter (*Error). ch receives the request's
// messages.
func (p *Process) crashAt(r Message, ch <-chan Message) error {
	p.mu.Lock()
	p.killed = true // its end is expected from now on
	p.mu.Unlock()
	p.note("asked to crash at point %s (request %d)", r.Point, r.InReplyTo)
	err := p.send(Message{Type: TypeCrash, InReplyTo: r.InReplyTo, Point: r.Point})
	timer := time.NewTimer(p.opts.ExitTimeout)
	defer timer.Stop()
	var problem, line string
	select {
	case <-p.exited:
		p.note("exited at point %s as asked (%s)", r.Point, exitStatus(p.waitErr))
	case m := <-ch:
		b, _ := json.Marshal(m)
		problem, line = fmt.Sprintf("went on past point %q after lockbench asked it to crash there (on crash, an adapter exits at once, without cleanup: os._exit(1))", r.Point), string(b)
	case <-timer.C:
		if err == nil {
			problem = fmt.Sprintf("did not exit within %v of being asked to crash at point %q (on crash, an adapter exits at once, without cleanup: os._exit(1))", p.opts.ExitTimeout, r.Point)
		}
	}
	p.killGroup()
	<-p.exited
	if problem != "" {
		p.mu.Lock()
		p.killed = false
		p.mu.Unlock()
		return p.fail(&Error{Problem: problem, Line: line})
	}
	p.markDead()
	return nil
}

// sendCancel asks the adapter to abandon request m (protocol 2's cancel
// request, for an adapter that declares cancel). The cancel's own reply is
// dropped when it comes.
func (p *Process) sendCancel(m Message) error {
	p.mu.Lock()
	if err := p.errLocked(); err != nil {
		p.mu.Unlock()
		return err
	}
	p.nextID++
	id := p.nextID
	p.cancels[id] = true
	p.mu.Unlock()
	p.note("cancelled %s (id %d) in flight (cancel id %d)", m.Type, m.ID, id)
	return p.send(Message{Type: TypeCancel, ID: id, Request: m.ID, Client: m.Client})
}

// pausedLocked returns the total time the process has spent paused up to
// now. p.mu is held.
func (p *Process) pausedLocked(now time.Time) time.Duration {
	d := p.pausedSum
	if p.paused {
		d += now.Sub(p.pausedAt)
	}
	return d
}

// abandon forgets a request whose caller gave up: its reply, if it comes,
// is ignored.
func (p *Process) abandon(id int64) {
	p.mu.Lock()
	if _, ok := p.pending[id]; ok {
		delete(p.pending, id)
		p.abandoned[id] = true
	}
	p.mu.Unlock()
}

// send writes one message to the adapter's stdin. A failed write means
// the adapter is gone: its failure (or ErrKilled) is returned.
func (p *Process) send(m Message) error {
	p.wmu.Lock()
	_, err := p.stdin.Write(Encode(m))
	p.wmu.Unlock()
	if err == nil {
		return nil
	}
	// The reader sees the end of stdout soon and says why.
	select {
	case <-p.dead:
		return p.err()
	case <-time.After(p.opts.ExitTimeout):
	}
	return p.fail(&Error{Problem: fmt.Sprintf("stopped reading its stdin (%v)", err)})
}

// readStdout reads the adapter's protocol lines until its stdout ends.
func (p *Process) readStdout(r io.Reader) {
	defer close(p.readerDone)
	br := bufio.NewReaderSize(r, 64<<10)
	first := true
	for {
		line, err := readLine(br)
		if errors.Is(err, errLong) {
			p.fail(&Error{Problem: fmt.Sprintf("wrote a line longer than %d bytes", maxLine), Line: string(line)})
			return
		}
		if err != nil {
			p.stdoutEnded(first)
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m Message
		if !json.Valid(line) {
			p.fail(&Error{Problem: "wrote a line that is not JSON (stdout carries protocol messages only: write logs to stderr)", Line: string(line)})
			return
		}
		if err := json.Unmarshal(line, &m); err != nil {
			p.fail(&Error{Problem: fmt.Sprintf("wrote a message lockbench cannot read (%v)", err), Line: string(line)})
			return
		}
		if first {
			first = false
			p.helloCh <- m
			continue
		}
		if problem := p.dispatch(m); problem != "" {
			p.fail(&Error{Problem: problem, Line: string(line)})
			return
		}
	}
}

// errLong is readLine's error for a line longer than maxLine.
var errLong = errors.New("line too long")

// readLine returns the next line without its newline; a last line
// without a newline counts.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return line, errLong
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(line) > 0 && errors.Is(err, io.EOF):
			return line, nil
		default:
			return nil, err
		}
	}
}

// dispatch routes one message after the hello; it returns the protocol
// problem, or "".
func (p *Process) dispatch(m Message) string {
	switch m.Type {
	case TypeOK, TypeFail, TypeUnknown, TypeInitOK, TypePoint:
		p.mu.Lock()
		ch, ok := p.pending[m.InReplyTo]
		late := p.abandoned[m.InReplyTo]
		cancel := p.cancels[m.InReplyTo]
		if ok && m.Type != TypePoint {
			delete(p.pending, m.InReplyTo)
		}
		if cancel && m.Type != TypePoint {
			delete(p.cancels, m.InReplyTo)
		}
		p.mu.Unlock()
		switch {
		case cancel && m.Type == TypePoint:
			return fmt.Sprintf("sent a point event in reply to cancel request %d (points belong to the request being served)", m.InReplyTo)
		case cancel:
			// the cancel's own answer: nothing waits for it
		case ok:
			ch <- m
		case late && m.Type == TypePoint:
			// A request lockbench gave up stopped at a point: let it go on
			// (it must not wait for an answer nobody will give).
			go p.send(Message{Type: TypeContinue, InReplyTo: m.InReplyTo})
		case late:
			p.note("ignored a late %s answering request %d, which lockbench had given up", m.Type, m.InReplyTo)
		case m.InReplyTo == 0:
			return fmt.Sprintf("sent a %q message without in_reply_to", m.Type)
		default:
			return fmt.Sprintf("sent a %q message in reply to id %d, which lockbench did not send or which was answered already", m.Type, m.InReplyTo)
		}
	case TypeLost:
		if m.Key == "" || m.Token == "" {
			return "sent a lost event without its key and token"
		}
		if p.opts.OnLost != nil {
			p.opts.OnLost(m.Client, m.Key, m.Token)
		}
	case TypeHello:
		return "sent a second hello"
	case "":
		return "sent a message without a type"
	default:
		return fmt.Sprintf("sent a message of unknown type %q (the adapter's messages: hello, init_ok, ok, fail, unknown, point, lost)", m.Type)
	}
	return ""
}

// stdoutEnded handles the end of the adapter's stdout: expected after
// Kill or Close, else the adapter died (or closed its stdout).
func (p *Process) stdoutEnded(beforeHello bool) {
	p.mu.Lock()
	expected := p.killed || p.closing
	p.mu.Unlock()
	if expected {
		p.markDead()
		return
	}
	when := ""
	if beforeHello {
		when = " before its hello"
	}
	select {
	case <-p.exited:
		e := &Error{Problem: fmt.Sprintf("exited%s (%s)", when, exitStatus(p.waitErr))}
		if beforeHello {
			e.Fix = "run the command by hand to see why: an adapter writes its hello at once (docs/protocol.md)"
		}
		p.fail(e)
	case <-time.After(p.opts.ExitTimeout):
		p.fail(&Error{Problem: "closed its stdout" + when + " and kept running"})
	}
}

// exitStatus describes how the process ended, from Wait's error.
func exitStatus(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	default:
		return err.Error()
	}
}

// readStderr copies the adapter's stderr to the log, line by line, up to
// Options.MaxLog bytes, and keeps its last line for errors.
func (p *Process) readStderr(r io.Reader) {
	defer close(p.stderrDone)
	br := bufio.NewReaderSize(r, 64<<10)
	var written int64
	cut := false
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			text := string(bytes.TrimRight(line, "\r\n"))
			if t := bytes.TrimSpace(line); len(t) > 0 {
				p.mu.Lock()
				p.lastErr = string(t)
				p.mu.Unlock()
			}
			switch {
			case written+int64(len(line)) <= p.opts.MaxLog:
				written += int64(len(line))
				p.logLine(text, err == nil)
			case !cut:
				cut = true
				p.note("the adapter's stderr passed %d bytes: the rest is not kept", p.opts.MaxLog)
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// logLine writes one stderr line (whole: ended by a newline) to the log.
func (p *Process) logLine(text string, whole bool) {
	if !whole {
		text += " [line continues]"
	}
	io.WriteString(p.opts.Log, p.opts.LogPrefix+text+"\n")
}

// note writes a line of lockbench's own to the log.
func (p *Process) note(format string, args ...any) {
	io.WriteString(p.opts.Log, p.opts.LogPrefix+"lockbench: "+fmt.Sprintf(format, args...)+"\n")
}

// fail records the adapter's first failure (filling in the command, the
// last stderr line and the log), kills the process and returns the
// recorded failure.
func (p *Process) fail(e *Error) error {
	p.mu.Lock()
	if p.failure != nil || p.killed || p.closing {
		err := p.errLocked()
		p.mu.Unlock()
		if err == nil {
			return e
		}
		return err
	}
	e.Command = p.opts.Command
	p.failure = e
	p.mu.Unlock()
	p.killGroup()
	// Its last words are on stderr: wait (briefly) for them.
	select {
	case <-p.stderrDone:
	case <-time.After(p.opts.ExitTimeout):
	}
	p.mu.Lock()
	e.Stderr, e.Log = p.lastErr, p.opts.LogName
	p.mu.Unlock()
	p.note("%s", e.Problem)
	p.markDead()
	return e
}

// err returns the reason no call can be made any more, or nil.
func (p *Process) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errLocked()
}

func (p *Process) errLocked() error {
	switch {
	case p.failure != nil:
		return p.failure
	case p.killed:
		return ErrKilled
	case p.closing:
		return fmt.Errorf("adapter %q: closed", p.opts.Command)
	}
	return nil
}

func (p *Process) markDead() { p.deadOnce.Do(func() { close(p.dead) }) }

// signal sends sig to the adapter's process group; a group already gone is
// not an error.
func (p *Process) signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (p *Process) killGroup() { p.signal(syscall.SIGKILL) }

// Pause stops the adapter's process group (SIGSTOP): every thread, its
// renewals included, stands still until Resume. Time paused does not
// count against a running request's deadline.
func (p *Process) Pause() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		return nil
	}
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("adapter %q: SIGSTOP: %w", p.opts.Command, err)
	}
	p.paused, p.pausedAt = true, time.Now()
	return nil
}

// Resume continues a paused adapter (SIGCONT).
func (p *Process) Resume() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		return nil
	}
	err := p.signal(syscall.SIGCONT)
	p.pausedSum += time.Since(p.pausedAt)
	p.paused = false
	if err != nil {
		return fmt.Errorf("adapter %q: SIGCONT: %w", p.opts.Command, err)
	}
	return nil
}

// Killed reports whether the process was killed as a client crash (Kill,
// or a crash at a point), not whether it failed.
func (p *Process) Killed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed && p.failure == nil
}

// Kill kills the adapter's process group (SIGKILL) as a client crash and
// waits until the process is gone. Calls waiting on it return ErrKilled.
func (p *Process) Kill() error {
	p.mu.Lock()
	already := p.killed || p.failure != nil
	p.killed = true
	p.mu.Unlock()
	if !already {
		p.note("killed (SIGKILL) as a client crash")
	}
	p.killGroup()
	<-p.exited
	p.markDead()
	return nil
}

// Close ends the adapter: it closes its stdin (the adapter must exit
// then), sends SIGTERM after Options.ExitTimeout and SIGKILL after
// another, and waits until the process and its output are gone. It returns
// an *Error when the adapter had to be killed; calling it again returns nil.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return nil
	}
	p.closing = true
	paused := p.paused
	p.mu.Unlock()
	if paused {
		p.signal(syscall.SIGCONT) // a stopped process cannot read the end of its stdin
	}
	p.stdin.Close() // not under wmu: a write blocked on a full pipe must not block Close
	var err error
	select {
	case <-p.exited:
	case <-time.After(p.opts.ExitTimeout):
		p.signal(syscall.SIGTERM)
		select {
		case <-p.exited:
			p.note("did not exit within %v of its stdin closing: stopped by SIGTERM", p.opts.ExitTimeout)
		case <-time.After(p.opts.ExitTimeout):
			p.killGroup()
			<-p.exited
			p.note("exited neither on the end of its stdin nor on SIGTERM (%v each): killed (SIGKILL)", p.opts.ExitTimeout)
			err = &Error{Command: p.opts.Command, Problem: fmt.Sprintf("exited neither on the end of its stdin nor on SIGTERM within %v each: killed (SIGKILL); an adapter must exit when its stdin closes", p.opts.ExitTimeout), Log: p.opts.LogName}
		}
	}
	p.killGroup()
	// A child that left the process group may still hold the output
	// pipes: stop reading them after a while.
	select {
	case <-p.readerDone:
	case <-time.After(p.opts.ExitTimeout):
		p.stdout.Close()
		<-p.readerDone
	}
	select {
	case <-p.stderrDone:
	case <-time.After(p.opts.ExitTimeout):
		p.stderr.Close()
		<-p.stderrDone
	}
	p.stdout.Close()
	p.stderr.Close()
	p.markDead()
	p.mu.Lock()
	failed := p.failure != nil
	p.mu.Unlock()
	if !failed && err == nil {
		p.removeLog()
	} else if p.tmpLog != nil {
		p.tmpLog.Close()
	}
	return err
}

// removeLog closes and removes the temporary log, if there is one.
func (p *Process) removeLog() {
	if p.tmpLog != nil {
		p.tmpLog.Close()
		os.Remove(p.tmpLog.Name())
	}
}

// startFix is the fix for an adapter command that cannot be started.
func startFix(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "make the file executable (chmod +x) or name its interpreter (exec:'python3 FILE')"
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		return "give a command on PATH or the path of an executable file (docs/protocol.md)"
	}
	return ""
}
