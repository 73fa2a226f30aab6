// Command lockbench-mutant serves lockbench's process protocol
// (docs/protocol.md) for the mutation zoo (mutants/mutants.go): a handful
// of correct Redis locks, each with bugs that can be switched on one at a
// time.
//
//	lockbench-mutant --lock token-lua --bug none              # the correct lock
//	lockbench-mutant --lock token-lua --bug release-no-token  # one mutant of it
//
// Every bug is one block, `if a.bug == "NAME" { ... }`, beside the correct
// code it replaces (locks.go), so a mutant reads as a small diff from its
// lock. The hello declares the correct lock's claims: a mutant pretends
// to be the lock it derives from, and lockbench judges it by them.
//
// It speaks protocol 2 with its own few types, as any adapter would
// (reasons on failed calls, the token a failed acquire tried, a renewed
// lease's validity), and takes nothing from lockbench but the zoo's
// table. It exits when its stdin ends.
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
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/mutants"
)

// msg is one protocol line (the fields this adapter uses).
type msg struct {
	Type      string `json:"type"`
	ID        int64  `json:"id,omitempty"`
	InReplyTo int64  `json:"in_reply_to,omitempty"`

	// hello
	Protocol int             `json:"protocol,omitempty"`
	Name     string          `json:"name,omitempty"`
	Version  string          `json:"version,omitempty"`
	Summary  string          `json:"summary,omitempty"`
	Source   string          `json:"source,omitempty"`
	Claims   map[string]bool `json:"claims,omitempty"`
	Nodes    int             `json:"nodes,omitempty"`
	Extend   bool            `json:"extend,omitempty"`

	Cancel bool `json:"cancel,omitempty"`

	// init
	Endpoints []string `json:"endpoints,omitempty"`
	TTLMs     int64    `json:"ttl_ms,omitempty"`
	Owner     string   `json:"owner,omitempty"`

	// requests and replies
	Key        string   `json:"key,omitempty"`
	Request    int64    `json:"request,omitempty"`
	Token      string   `json:"token,omitempty"`
	DeadlineMs float64  `json:"deadline_ms,omitempty"`
	Fence      int64    `json:"fence,omitempty"`
	ValidityMs *float64 `json:"validity_ms,omitempty"`
	Count      int      `json:"count,omitempty"`
	Remaining  int      `json:"remaining,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// Reply types.
const (
	typeOK      = "ok"
	typeFail    = "fail"
	typeUnknown = "unknown"
)

// allClaims are the protocol's seven claims; the hello names every one.
var allClaims = []string{"atomic_acquire", "token_release", "renewal", "reentrant", "quorum", "fencing", "validity"}

func main() {
	lockName := flag.String("lock", "", "the zoo's correct lock: "+lockNames())
	bugName := flag.String("bug", "", "the mutant to serve (mutants/mutants.go), or none for the correct lock")
	flag.Parse()
	if *lockName == "" || *bugName == "" {
		fmt.Fprintln(os.Stderr, "lockbench-mutant: give --lock LOCK and --bug BUG (none: the correct lock); locks: "+lockNames())
		os.Exit(2)
	}
	lock, err := mutants.LookupLock(*lockName)
	if err == nil {
		_, err = mutants.Lookup(*lockName, *bugName)
	}
	if err == nil && lock.Python {
		err = fmt.Errorf("--lock %s is served by the zoo's Python adapter (python3 mutants/testdata/pyadapter/adapter.py)", lock.Name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench-mutant:", err)
		os.Exit(2)
	}
	redis.SetLogger(quiet{}) // dial failures are the faults' doing, not news
	// One client per process needs no parallel threads (as adapters/go).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	a := newAdapter(lock, *bugName, os.Stdout)
	if err := a.serve(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench-mutant:", err)
		os.Exit(1)
	}
}

// quiet drops go-redis's log lines.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// lockNames lists the zoo's locks for usage lines.
func lockNames() string {
	var names []string
	for _, l := range mutants.Locks {
		if !l.Python {
			names = append(names, l.Name)
		}
	}
	return strings.Join(names, ", ")
}

// adapter is one client: its lock (with its bug switched on), its nodes
// and its leases by token.
type adapter struct {
	lock mutants.Lock
	bug  string

	outMu sync.Mutex
	out   io.Writer

	mu       sync.Mutex
	inFlight map[int64]*request // requests read and not yet answered, by id

	*locker
}

func newAdapter(lock mutants.Lock, bug string, out io.Writer) *adapter {
	return &adapter{lock: lock, bug: bug, out: out, inFlight: map[int64]*request{}}
}

// send writes one message as one line; lost events come from renewal
// goroutines, so lines are written under outMu.
func (a *adapter) send(m msg) {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // msg always marshals
	}
	a.outMu.Lock()
	defer a.outMu.Unlock()
	a.out.Write(append(b, '\n'))
}

// hello declares the correct lock's claims, whatever the bug.
func (a *adapter) hello() msg {
	claims := map[string]bool{}
	for _, c := range allClaims {
		claims[c] = false
	}
	for _, c := range a.lock.Claims {
		claims[c] = true
	}
	summary := a.lock.Summary
	if a.bug != "none" {
		m, _ := mutants.Lookup(a.lock.Name, a.bug)
		summary = "MUTANT " + a.bug + ": " + m.Does + "; the lock it breaks: " + summary
	}
	return msg{Type: "hello", Protocol: 2, Name: "mutant-" + a.lock.Name, Version: "bug " + a.bug,
		Nodes: a.lock.Nodes, Extend: a.lock.Extend, Cancel: true, Claims: claims, Summary: summary,
		Source: "lockbench's mutation zoo (mutants/, docs/mutants.md)"}
}

// request is a request read and not yet answered: its context carries
// its deadline, and ends early when lockbench cancels it.
type request struct {
	m      msg
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// errCancelled is the cause of a request's context that lockbench
// cancelled in flight (a cancel request).
var errCancelled = errors.New("cancelled by lockbench")

// serve writes the hello, then answers requests until in ends: one at a
// time, in the order received, on a worker goroutine, while this one
// reads on, so that a cancel reaches the request it names in flight.
func (a *adapter) serve(in io.Reader) error {
	a.send(a.hello())
	queue := make(chan *request, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := range queue {
			reply := a.handle(r.ctx, r.m)
			reply.InReplyTo = r.m.ID
			a.send(reply)
			r.cancel(nil)
			a.mu.Lock()
			delete(a.inFlight, r.m.ID)
			a.mu.Unlock()
		}
	}()
	defer func() {
		close(queue)
		<-done
		if a.locker != nil {
			a.locker.close()
		}
	}()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var m msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("stdin: %v: %q", err, sc.Text())
		}
		if m.Type == "cancel" {
			a.mu.Lock()
			r := a.inFlight[m.Request]
			a.mu.Unlock()
			if r != nil {
				r.cancel(errCancelled)
			}
			a.send(msg{Type: typeOK, InReplyTo: m.ID})
			continue
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		if m.Type != "init" {
			// deadline_ms counts from when lockbench sent the request.
			var stop context.CancelFunc
			ctx, stop = context.WithTimeout(ctx, time.Duration(m.DeadlineMs*float64(time.Millisecond)))
			cancelCause := cancel
			cancel = func(cause error) { cancelCause(cause); stop() }
		}
		r := &request{m: m, ctx: ctx, cancel: cancel}
		a.mu.Lock()
		a.inFlight[m.ID] = r
		a.mu.Unlock()
		queue <- r
	}
	return sc.Err()
}

// handle answers one request.
func (a *adapter) handle(ctx context.Context, m msg) msg {
	if m.Type == "init" {
		l, err := newLocker(a.lock, a.bug, m.Endpoints, time.Duration(m.TTLMs)*time.Millisecond, m.Owner, a.send)
		if err != nil {
			return msg{Type: typeFail, Error: err.Error()}
		}
		a.locker = l
		return msg{Type: "init_ok"}
	}
	if m.Type == "ping" {
		return msg{Type: typeOK}
	}
	if a.locker == nil {
		return msg{Type: typeFail, Error: m.Type + " before init"}
	}
	var r msg
	switch {
	case m.Type == "acquire":
		r = a.acquire(ctx, m.Key)
	case m.Type == "release":
		r = a.release(ctx, m.Key, m.Token)
	case m.Type == "extend" && a.lock.Extend:
		r = a.extend(ctx, m.Key, m.Token)
	default:
		return msg{Type: typeFail, Error: "not supported: " + m.Type}
	}
	if r.Type == typeUnknown && cancelled(ctx) {
		r.Reason = reasonCancelled
	}
	return r
}

// cancelled reports whether lockbench cancelled the request of ctx.
func cancelled(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errCancelled) }
