// Command lockbench-adapter-redsync-v4.11 serves lockbench's process
// protocol (docs/protocol.md in the lockbench repository) for
// github.com/go-redsync/redsync/v4 at v4.11.0, pinned in this module's
// go.mod, while lockbench links a later release in-process (strategy
// redsync): two releases of one Redlock library side by side. It is used
// as lockbench's in-process redsync adapter uses its release: one
// TryLockContext per acquire, the library's defaults otherwise (expiry =
// the run's TTL, drift factor 0.01, timeout factor 0.05).
//
// It is a module of its own and imports nothing from lockbench: the
// protocol code below is all an adapter in Go needs. It exits when its
// stdin ends.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/hashicorp/go-multierror"
	goredislib "github.com/redis/go-redis/v9"
)

// msg is one protocol line (the fields this adapter uses).
type msg struct {
	Type       string          `json:"type"`
	ID         int64           `json:"id,omitempty"`
	InReplyTo  int64           `json:"in_reply_to,omitempty"`
	Protocol   int             `json:"protocol,omitempty"`
	Name       string          `json:"name,omitempty"`
	Version    string          `json:"version,omitempty"`
	Summary    string          `json:"summary,omitempty"`
	Source     string          `json:"source,omitempty"`
	Claims     map[string]bool `json:"claims,omitempty"`
	Nodes      int             `json:"nodes,omitempty"`
	Endpoints  []string        `json:"endpoints,omitempty"`
	TTLMs      int64           `json:"ttl_ms,omitempty"`
	Key        string          `json:"key,omitempty"`
	Token      string          `json:"token,omitempty"`
	DeadlineMs float64         `json:"deadline_ms,omitempty"`
	ValidityMs *float64        `json:"validity_ms,omitempty"`
	Error      string          `json:"error,omitempty"`
}

const nodes = 5

func main() {
	out := json.NewEncoder(os.Stdout) // one Encode, one line
	out.Encode(msg{Type: "hello", Protocol: 1, Name: "redsync", Version: version(), Nodes: nodes,
		Summary: "redsync v4.11.0 Mutex.TryLockContext: Redlock (SET NX PX on 5 nodes in parallel, quorum 3, validity TTL − elapsed − 0.01·TTL); release: Lua compare-and-delete on all nodes",
		Source:  "github.com/go-redsync/redsync/v4 v4.11.0, after the redis.io distlock page",
		Claims: map[string]bool{"atomic_acquire": true, "token_release": true, "renewal": false, "reentrant": false,
			"quorum": true, "fencing": false, "validity": true}})
	a := &adapter{mutexes: map[string]*redsync.Mutex{}}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for in.Scan() {
		var m msg
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fmt.Fprintf(os.Stderr, "redsync-v4.11 adapter: stdin: %v: %q\n", err, in.Text())
			os.Exit(1)
		}
		r := a.handle(m)
		r.InReplyTo = m.ID
		out.Encode(r)
	}
}

// version is the redsync release linked into this binary.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/go-redsync/redsync/v4" {
				return d.Version
			}
		}
	}
	return "v4.11.0"
}

// adapter is one client: its redsync over one go-redis client per node,
// its granted mutexes by token.
type adapter struct {
	rs      *redsync.Redsync
	ttl     time.Duration
	mu      sync.Mutex
	mutexes map[string]*redsync.Mutex
}

func (a *adapter) handle(m msg) msg {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(m.DeadlineMs*float64(time.Millisecond)))
	defer cancel()
	switch m.Type {
	case "init":
		return a.init(m)
	case "ping":
		return msg{Type: "ok"}
	case "acquire":
		return a.acquire(ctx, m.Key)
	case "release":
		return a.release(ctx, m.Token)
	}
	return msg{Type: "fail", Error: "not supported: " + m.Type}
}

func (a *adapter) init(m msg) msg {
	if len(m.Endpoints) != nodes {
		return msg{Type: "fail", Error: fmt.Sprintf("want %d endpoints, got %d", nodes, len(m.Endpoints))}
	}
	a.ttl = time.Duration(m.TTLMs) * time.Millisecond
	var pools []rsredis.Pool
	for _, e := range m.Endpoints {
		c := goredislib.NewClient(&goredislib.Options{Addr: e, PoolSize: 4, MaxRetries: -1, ContextTimeoutEnabled: true,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		pools = append(pools, goredis.NewPool(c))
	}
	a.rs = redsync.New(pools...)
	return msg{Type: "init_ok"}
}

// acquire is one TryLockContext: ok with the token and the validity left,
// fail when the nodes' answers rule a quorum out, unknown otherwise.
func (a *adapter) acquire(ctx context.Context, key string) msg {
	m := a.rs.NewMutex(key, redsync.WithExpiry(a.ttl), redsync.WithTries(1))
	if err := m.TryLockContext(ctx); err != nil {
		return msg{Type: outcome(err, true), Error: err.Error()}
	}
	v := float64(time.Until(m.Until()).Microseconds()) / 1000
	a.mu.Lock()
	a.mutexes[m.Value()] = m
	a.mu.Unlock()
	return msg{Type: "ok", Token: m.Value(), ValidityMs: &v}
}

// release is UnlockContext of the mutex with token: ok when a quorum
// deleted it, fail when every node answered and none held it, unknown otherwise.
func (a *adapter) release(ctx context.Context, token string) msg {
	a.mu.Lock()
	m := a.mutexes[token]
	delete(a.mutexes, token)
	a.mu.Unlock()
	if m == nil {
		return msg{Type: "fail", Error: "no lock with this token"}
	}
	ok, err := m.UnlockContext(ctx)
	if ok {
		return msg{Type: "ok"}
	}
	if err == nil {
		return msg{Type: "unknown", Error: "not released on a quorum"}
	}
	return msg{Type: outcome(err, false), Error: err.Error()}
}

// outcome classifies a redsync error: "fail" when the nodes' answers are
// definite (a quorum taken, every node answered, or too few could have
// said yes), "unknown" when nodes that failed with errors could complete
// a quorum.
func outcome(err error, acquiring bool) string {
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) || errors.Is(err, redsync.ErrFailed) {
		return "fail"
	}
	var merr *multierror.Error
	if !errors.As(err, &merr) {
		return "unknown"
	}
	unknown, no := 0, 0
	for _, e := range merr.Errors {
		var re *redsync.RedisError
		if errors.As(e, &re) {
			unknown++
		} else {
			no++
		}
	}
	yes := nodes - unknown - no
	switch {
	case unknown == 0:
		return "fail"
	case acquiring && yes+unknown < nodes/2+1:
		return "fail"
	}
	return "unknown"
}
