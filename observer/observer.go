// Package observer reads the state of every lock key on the Redis servers
// during a run (the token a key holds and its PTTL) and records each read
// as a history.Observe operation, so the checker can tell what a server
// held when a client's reply was lost or late. See Observer.
package observer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/workload"
)

// Node is one Redis server the Observer reads.
type Node struct {
	// Name labels the node in the history ("n1".., as per-node calls of a
	// quorum strategy name it: the strategy's nodes in order).
	Name string
	// Addr is the server's own address (host:port), never a scenario's
	// proxy: a cut link must not blind the observer.
	Addr string
}

// Config configures an Observer. Durations are time.Duration; a
// zero field takes the default its doc names.
type Config struct {
	// Nodes are the servers to read, each through a direct connection.
	// Required.
	Nodes []Node
	// Security is the servers' AUTH and TLS (zero: plain).
	Security security.Security
	// Keys are the lock keys to read (workload.Config.Key(0..Keys-1)). Required.
	Keys []string
	// TTL is the run's lock TTL; the defaults below follow it. Required.
	TTL time.Duration
	// Period: every key is read at least this often while the observer
	// runs, MaxKeysPerPass keys per pass in turn when there are more (with
	// more than 2 × MaxKeysPerPass keys, less often: at most 2 periodic
	// passes per Period). Default: TTL/2, at least 1 ms.
	Period time.Duration
	// Gap: a key read on request (Notify) is read at most once per Gap.
	// Default: TTL/10, at least 1 ms.
	Gap time.Duration
	// Timeout bounds each read (dial, write and read of one pass on one
	// node). Default: TTL/2, between 20 ms and 1 s.
	Timeout time.Duration
	// MaxKeysPerPass bounds the keys read in one pass (one round trip per
	// node): requested keys first, then the keys due for their periodic
	// read, oldest first. Default 8.
	MaxKeysPerPass int
	// Clock stamps the observations; History receives them (Client -1,
	// Stream -1, kind history.Observe). Both required.
	Clock   *history.Clock
	History workload.Recorder
}

// withDefaults fills in the defaults and checks the required fields.
func (c Config) withDefaults() (Config, error) {
	switch {
	case len(c.Nodes) == 0:
		return c, errors.New("observer: no nodes to read")
	case len(c.Keys) == 0:
		return c, errors.New("observer: no keys to read")
	case c.TTL <= 0:
		return c, fmt.Errorf("observer: TTL %v is not positive", c.TTL)
	case c.Clock == nil || c.History == nil:
		return c, errors.New("observer: Clock and History are required")
	}
	if c.Period <= 0 {
		c.Period = max(c.TTL/2, time.Millisecond)
	}
	if c.Gap <= 0 {
		c.Gap = max(c.TTL/10, time.Millisecond)
	}
	if c.Timeout <= 0 {
		c.Timeout = min(max(c.TTL/2, 20*time.Millisecond), time.Second)
	}
	if c.MaxKeysPerPass <= 0 {
		c.MaxKeysPerPass = 8
	}
	return c, nil
}

// observedCommands is how many commands a read of one key sends that INFO
// commandstats counts (PTTL, GET, HGETALL; MULTI and EXEC are harness
// commands, see commandstats.HarnessCommand).
const observedCommands = 3

// Observer reads the state of every lock key on every Redis node, through
// direct connections, and records each read as a history.Observe
// operation: the token the key holds (the string value, or the owner field
// of a reentrant lock's hash, with its count), and its PTTL. It reads a key
// soon after Notify asks (at most once per Gap: the workload asks after
// every acquire that did not grant and every release or extend that
// failed), every key at least once per Period, and every key once more at
// Stop. The reads of one pass share one Invoke (see history.Observe). One
// pass on a node is MULTI, ROLE, then PTTL, GET, HGETALL per key, EXEC, in
// one round trip: atomic on the server, the wrong-type error of GET or
// HGETALL tells a string from a hash without another round trip, and ROLE
// marks the reads of a replica (Note history.ObservedOnReplica), which
// copies its primary's keys rather than holding a lock of its own.
//
// Its commands reach the servers' INFO commandstats (three counted per key
// read): Commands says how many it sent to each address, so that a run's
// server-side commands per grant can leave them out. It is safe for
// concurrent use; Notify is cheap (an atomic flag and at most one channel
// send per pass).
type Observer struct {
	cfg     Config
	index   map[string]int
	clients []*redis.Client
	sent    []atomic.Int64 // per node: counted commands sent

	asked   []atomic.Bool // per key: a read was asked for (and its index is in pending)
	pmu     sync.Mutex
	pending []int       // keys asked for, in order
	lastAt  []time.Time // per key: start of its last pass (loop goroutine only)
	next    int         // periodic round-robin position (loop goroutine only)
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	stopped atomic.Bool
	// busy is set per node while a read is in flight there; inflight
	// counts the reads in flight.
	busy     []atomic.Bool
	inflight sync.WaitGroup
}

// Start starts an Observer; Stop ends it. ctx bounds its reads
// until Stop.
func Start(ctx context.Context, cfg Config) (*Observer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	o := &Observer{cfg: cfg, index: make(map[string]int, len(cfg.Keys)),
		sent: make([]atomic.Int64, len(cfg.Nodes)), busy: make([]atomic.Bool, len(cfg.Nodes)), asked: make([]atomic.Bool, len(cfg.Keys)),
		lastAt: make([]time.Time, len(cfg.Keys)),
		wake:   make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for i, k := range cfg.Keys {
		o.index[k] = i
	}
	d := workload.Dialer{Timeout: cfg.Timeout, Security: cfg.Security}
	for _, n := range cfg.Nodes {
		opt := d.Options(n.Addr)
		// RESP2 without HELLO or CLIENT SETINFO: the observer adds no
		// connection set-up command to the servers' counts; one
		// connection, no retries (a retried read would be sent twice).
		opt.Protocol, opt.DisableIdentity = 2, true
		o.clients = append(o.clients, redis.NewClient(opt))
	}
	// Dial every node before the run needs a read (PING is a harness
	// command): a first read would otherwise pay for the dial.
	var wg sync.WaitGroup
	for _, c := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			defer cancel()
			c.Ping(pctx)
		}()
	}
	wg.Wait()
	go o.loop(ctx)
	return o, nil
}

// Notify asks for a read of key soon (at most once per Gap). Keys the
// observer does not read are ignored. It never blocks.
func (o *Observer) Notify(key string) {
	if o == nil {
		return
	}
	i, ok := o.index[key]
	if !ok || !o.asked[i].CompareAndSwap(false, true) {
		return
	}
	o.pmu.Lock()
	o.pending = append(o.pending, i)
	o.pmu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Stop ends the periodic and requested reads, reads every key on every
// node once more (the state the run left, bounded by ctx and Timeout) and
// closes the connections. Later calls do nothing.
func (o *Observer) Stop(ctx context.Context) {
	if o == nil || !o.stopped.CompareAndSwap(false, true) {
		return
	}
	close(o.stop)
	<-o.done
	o.inflight.Wait()
	all := make([]int, len(o.cfg.Keys))
	for i := range all {
		all[i] = i
	}
	for len(all) > 0 && ctx.Err() == nil {
		n := min(len(all), o.cfg.MaxKeysPerPass)
		o.pass(ctx, all[:n], true)
		all = all[n:]
	}
	for _, c := range o.clients {
		c.Close()
	}
}

// Commands returns, per node address, the commands the observer sent that
// INFO commandstats counts (three per key read; MULTI and EXEC are harness
// commands), reads that could not connect left out.
func (o *Observer) Commands() map[string]int64 {
	out := map[string]int64{}
	if o == nil {
		return out
	}
	for i, n := range o.cfg.Nodes {
		out[n.Addr] += o.sent[i].Load()
	}
	return out
}

// loop runs passes until Stop: requested keys as soon as their Gap allows,
// every key at least once per Period.
func (o *Observer) loop(ctx context.Context) {
	defer close(o.done)
	tick := time.NewTicker(o.tickEvery())
	defer tick.Stop()
	var wait *time.Timer
	var waitC <-chan time.Time
	for {
		select {
		case <-o.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-o.wake:
		case <-waitC:
			waitC = nil
		}
		keys, retry, more := o.due(time.Now())
		if len(keys) > 0 {
			o.pass(ctx, keys, false)
		}
		if more { // requested keys left for the next pass
			select {
			case o.wake <- struct{}{}:
			default:
			}
		}
		if retry > 0 && waitC == nil {
			if wait == nil {
				wait = time.NewTimer(retry)
			} else {
				wait.Reset(retry)
			}
			waitC = wait.C
		}
	}
}

// maxPassesPerPeriod bounds the periodic passes per Period: with more keys
// than MaxKeysPerPass × maxPassesPerPeriod, each key is read less often
// than once per Period (the periodic reads' cost stays bounded whatever
// the number of keys).
const maxPassesPerPeriod = 2

// tickEvery is how often the loop looks for keys due for their periodic
// read: Period, or less when the keys need more than one pass per Period
// (at most maxPassesPerPeriod passes).
func (o *Observer) tickEvery() time.Duration {
	passes := (len(o.cfg.Keys) + o.cfg.MaxKeysPerPass - 1) / o.cfg.MaxKeysPerPass
	passes = min(passes, maxPassesPerPeriod)
	return max(o.cfg.Period/time.Duration(passes), time.Millisecond)
}

// due picks the keys of the next pass at now: requested keys whose last
// pass is at least Gap old, in the order asked, then keys whose last pass
// is at least Period old (round robin), at most MaxKeysPerPass; retry > 0
// is when a requested key held back by its Gap becomes due; more is true
// when requested keys that are due did not fit in the pass.
func (o *Observer) due(now time.Time) (keys []int, retry time.Duration, more bool) {
	c := o.cfg
	o.pmu.Lock()
	pending := o.pending
	o.pending = nil
	o.pmu.Unlock()
	var keep []int
	for _, i := range pending {
		left := c.Gap - now.Sub(o.lastAt[i])
		switch {
		case left > 0:
			if retry == 0 || left < retry {
				retry = left
			}
			keep = append(keep, i)
		case len(keys) == c.MaxKeysPerPass:
			more = true
			keep = append(keep, i)
		default:
			o.asked[i].Store(false)
			keys = append(keys, i)
		}
	}
	if len(keep) > 0 {
		o.pmu.Lock()
		o.pending = append(keep, o.pending...)
		o.pmu.Unlock()
	}
	// Periodic reads, round robin: at most two passes' worth of keys looked at.
	n := 0
	for ; n < 2*c.MaxKeysPerPass && n < len(o.lastAt) && len(keys) < c.MaxKeysPerPass; n++ {
		i := (o.next + n) % len(o.lastAt)
		if now.Sub(o.lastAt[i]) >= c.Period && !containsInt(keys, i) {
			keys = append(keys, i)
		}
	}
	o.next = (o.next + n) % len(o.lastAt)
	for _, i := range keys {
		o.lastAt[i] = now
	}
	return keys, retry, more
}

func containsInt(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// pass reads keys on every node in parallel, one round trip per node, and
// records one Observe operation per key and node, all with the pass's
// start as Invoke. A node whose previous read has not returned (a paused
// or slow node) is not sent another: its reads in this pass are recorded
// as unknown at once, so one stuck node delays no other node's reads. With
// wait, pass returns when every read has; otherwise at once.
func (o *Observer) pass(ctx context.Context, keys []int, wait bool) {
	inv := o.cfg.Clock.Now()
	var wg sync.WaitGroup
	for n := range o.clients {
		if !o.busy[n].CompareAndSwap(false, true) {
			o.recordBusy(n, keys, inv)
			continue
		}
		wg.Add(1)
		o.inflight.Add(1)
		go func() {
			defer func() { o.busy[n].Store(false); o.inflight.Done(); wg.Done() }()
			o.readNode(ctx, n, keys, inv)
		}()
	}
	if wait {
		wg.Wait()
	}
}

// recordBusy records node n's reads of keys as unknown: its previous read
// has not returned.
func (o *Observer) recordBusy(n int, keys []int, inv int64) {
	done := o.cfg.Clock.Now()
	node := o.cfg.Nodes[n].Name
	for _, k := range keys {
		o.cfg.History.Record(history.Operation{Client: -1, Stream: -1, Kind: history.Observe, Key: o.cfg.Keys[k], Node: node,
			Invoke: inv, Complete: done, Result: history.Info,
			Error: fmt.Sprintf("observe %s on %s: not sent: the node's previous read has not returned (paused or slow node)", o.cfg.Keys[k], node)})
	}
}

// readNode reads keys on node n and records the observations.
func (o *Observer) readNode(ctx context.Context, n int, keys []int, inv int64) {
	type read struct {
		pttl *redis.DurationCmd
		get  *redis.StringCmd
		hash *redis.MapStringStringCmd
	}
	reads := make([]read, len(keys))
	c, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	var role *redis.Cmd
	_, err := o.clients[n].TxPipelined(c, func(p redis.Pipeliner) error {
		role = p.Do(c, "role")
		for i, k := range keys {
			key := o.cfg.Keys[k]
			reads[i] = read{p.PTTL(c, key), p.Get(c, key), p.HGetAll(c, key)}
		}
		return nil
	})
	replica := false
	if v, err := role.Slice(); err == nil && len(v) > 0 {
		replica = v[0] == "slave"
	}
	if !isDialError(err) {
		o.sent[n].Add(int64(observedCommands * len(keys)))
	}
	done := o.cfg.Clock.Now()
	node := o.cfg.Nodes[n].Name
	for i, k := range keys {
		op := history.Operation{Client: -1, Stream: -1, Kind: history.Observe, Key: o.cfg.Keys[k], Node: node,
			Invoke: inv, Complete: done, Result: history.OK}
		if e := readError(err, reads[i].pttl.Err()); e != nil {
			op.Result, op.Error = history.Info, fmt.Sprintf("observe %s on %s: %v", op.Key, node, e)
		} else {
			op.Value = pttlMs(reads[i].pttl.Val())
			op.Token, op.Count, op.Note = tokenOf(reads[i].get, reads[i].hash)
			if replica {
				op.Note = strings.TrimSuffix(history.ObservedOnReplica+"; "+op.Note, "; ")
			}
		}
		o.cfg.History.Record(op)
	}
}

// readError is the error that makes a read unknown: the transaction's,
// unless it is only a command's own error (a wrong type, a missing key),
// else PTTL's.
func readError(txErr, pttlErr error) error {
	if txErr != nil && !errors.Is(txErr, redis.Nil) && !isWrongType(txErr) {
		return txErr
	}
	return pttlErr
}

// isWrongType reports whether err is Redis's WRONGTYPE reply.
func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }

// isDialError reports whether err shows that no connection was made (so
// no command was sent).
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// pttlMs converts go-redis's PTTL reply to ms, keeping -1 (no TTL) and -2
// (no key).
func pttlMs(d time.Duration) int64 {
	switch d {
	case -1, -2: // go-redis passes the special replies through as ns
		return int64(d)
	}
	return d.Milliseconds()
}

// tokenOf reads the owner token from GET (a string key) or HGETALL (a hash:
// the owner field, the lowest when there are several, and its count); note
// names every field of a hash with more than one, or a key of another type.
func tokenOf(get *redis.StringCmd, hash *redis.MapStringStringCmd) (token string, count int, note string) {
	if err := get.Err(); err == nil {
		return get.Val(), 0, ""
	}
	if hash.Err() != nil {
		if isWrongType(hash.Err()) && isWrongType(get.Err()) {
			return "", 0, "key of another type than string or hash"
		}
		return "", 0, ""
	}
	fields := hash.Val()
	if len(fields) == 0 {
		return "", 0, ""
	}
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	sort.Strings(names)
	n, _ := strconv.Atoi(fields[names[0]])
	if len(names) > 1 {
		parts := make([]string, len(names))
		for i, f := range names {
			parts[i] = f + "=" + fields[f]
		}
		note = "hash fields: " + strings.Join(parts, ", ")
	}
	return names[0], n, note
}
