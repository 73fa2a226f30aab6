package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/mutants"
)

// The locks' Lua scripts.
var (
	// compareAndDelete deletes KEYS[1] if it holds ARGV[1]: 1; the key is
	// absent: 0; it holds another token: -1.
	compareAndDelete = redis.NewScript(`
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then return redis.call('del', KEYS[1]) end
if v then return -1 end
return 0`)
	// compareAndPexpire sets KEYS[1]'s TTL to ARGV[2] ms if it holds
	// ARGV[1]: 1; the key is absent: 0; it holds another token: -1.
	compareAndPexpire = redis.NewScript(`
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if v then return -1 end
return 0`)
	// fencedAcquire: SET KEYS[1] ARGV[1] NX PX ARGV[2] and, if set, INCR
	// the fence counter KEYS[2]; with ARGV[3] = "1" the counter also gets
	// the TTL (the fence-expires-with-lock mutant). Returns the fence, or 0.
	fencedAcquire = redis.NewScript(`
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local f = redis.call('incr', KEYS[2])
  if ARGV[3] == '1' then redis.call('pexpire', KEYS[2], ARGV[2]) end
  return f
end
return 0`)
	// reentrantAcquire (Redisson tryLockInnerAsync): the owner's count
	// after this acquire, or 0 when another owner holds the hash.
	reentrantAcquire = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local n = redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return n
end
return 0`)
	// reentrantRelease (Redisson unlockInnerAsync): the count left (0:
	// deleted); -2 when the hash is gone, -1 when another owner holds it.
	reentrantRelease = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 then return -2 end
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return -1 end
local n = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if n > 0 then redis.call('pexpire', KEYS[1], ARGV[2]); return n end
redis.call('del', KEYS[1])
return 0`)
)

// nodePoolSize is each node client's pool (as adapters/go: a small pool
// stops dialling after PoolSize failed dials).
const nodePoolSize = 1024

// locker is one client's lock: the zoo's lock named by lock, with bug
// switched on ("none": the correct lock).
type locker struct {
	lock  mutants.Lock
	bug   string
	ttl   time.Duration
	nodes []*redis.Client
	send  func(msg) // for lost events

	prefix string // owner:nonce, the reentrant lock's hash field
	n      atomic.Int64

	mu       sync.Mutex
	renewals map[string]context.CancelFunc // watchdog: the renewal of each lease, by token
	bg       sync.WaitGroup
}

func newLocker(lock mutants.Lock, bug string, endpoints []string, ttl time.Duration, owner string, send func(msg)) (*locker, error) {
	if len(endpoints) != lock.Nodes {
		return nil, fmt.Errorf("%s needs %d endpoint(s), got %d", lock.Name, lock.Nodes, len(endpoints))
	}
	if ttl < 3*time.Millisecond {
		return nil, fmt.Errorf("TTL %v is below 3ms", ttl)
	}
	nonce := make([]byte, 6)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	l := &locker{lock: lock, bug: bug, ttl: ttl, send: send, prefix: owner + ":" + hex.EncodeToString(nonce),
		renewals: map[string]context.CancelFunc{}}
	for _, e := range endpoints {
		// RESP2 without CLIENT SETINFO: a dial is one round trip, which a
		// per-node timeout of TTL/10 can afford on a busy machine.
		l.nodes = append(l.nodes, redis.NewClient(&redis.Options{Addr: e, PoolSize: nodePoolSize, MaxRetries: -1,
			Protocol: 2, DisableIdentity: true,
			ContextTimeoutEnabled: true, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
			DialerRetries: 1, DialerRetryTimeout: time.Millisecond}))
	}
	// One connection to each node before the first call, so that no lock
	// call pays for a dial (best effort: a node down now is dialled later).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, n := range l.nodes {
		wg.Go(func() { n.Ping(ctx) })
	}
	wg.Wait()
	return l, nil
}

// close stops every renewal and closes the node clients.
func (l *locker) close() {
	l.mu.Lock()
	for _, stop := range l.renewals {
		stop()
	}
	l.mu.Unlock()
	l.bg.Wait()
	for _, n := range l.nodes {
		n.Close()
	}
}

// token is a new grant's token: owner:nonce:n.
func (l *locker) token() string { return fmt.Sprintf("%s:%d", l.prefix, l.n.Add(1)) }

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Reasons of fail and unknown replies (protocol 2).
const (
	reasonExpired     = "expired"
	reasonTaken       = "taken"
	reasonUnavailable = "unavailable"
	reasonCancelled   = "cancelled"
	reasonUnknown     = "unknown"
)

// failed is a fail reply with its reason and, for an acquire, the token
// it tried.
func failed(reason, token, format string, args ...any) msg {
	return msg{Type: typeFail, Reason: reason, Token: token, Error: fmt.Sprintf(format, args...)}
}

// unknown is an unknown reply for err; token is the token an acquire
// tried ("" for other calls).
func unknown(err error, token string) msg {
	reason := reasonUnknown
	if notSent(err) {
		reason = reasonUnavailable
	}
	return msg{Type: typeUnknown, Reason: reason, Token: token, Error: err.Error()}
}

// lostReply reports whether err is a connection that broke after the
// command was sent (its reply never came), not a timeout of the call: the
// command may have run, and the call still has time to ask again.
func lostReply(ctx context.Context, err error) bool {
	var op *net.OpError
	switch {
	case err == nil || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &op) && op.Op == "dial":
		return false
	case errors.As(err, &op) && op.Timeout():
		return false
	}
	return true
}

// abandonable runs one command and returns its result, or, when
// lockbench cancels the request first, an error wrapping the cancel's
// cause at once: the command is abandoned in flight (go-redis itself
// waits for a written command's reply whatever its context says), and
// may still run on the node. The caller cleans up after it.
func abandonable[T any](ctx context.Context, do func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := do()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		if cancelled(ctx) {
			var zero T
			return zero, fmt.Errorf("abandoned: %w", context.Cause(ctx))
		}
		r := <-ch // a deadline: go-redis ends the command by then
		return r.v, r.err
	}
}

// notSent reports whether err proves the command never reached the node
// (the dial failed): a definite no.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (l *locker) acquire(ctx context.Context, key string) msg {
	switch l.lock.Name {
	case "token-lua", "watchdog", "token-validity":
		return l.acquireSingle(ctx, key)
	case "fenced":
		return l.acquireFenced(ctx, key)
	case "reentrant":
		return l.acquireReentrant(ctx, key)
	case "redlock", "redlock-renew":
		return l.acquireQuorum(ctx, key)
	}
	return failed(reasonUnknown, "", "no acquire for %s", l.lock.Name)
}

func (l *locker) release(ctx context.Context, key, token string) msg {
	switch l.lock.Name {
	case "token-lua", "watchdog", "fenced", "token-validity":
		return l.releaseSingle(ctx, key, token)
	case "reentrant":
		return l.releaseReentrant(ctx, key, token)
	case "redlock", "redlock-renew":
		return l.releaseQuorum(ctx, key, token)
	}
	return failed(reasonUnknown, "", "no release for %s", l.lock.Name)
}

func (l *locker) extend(ctx context.Context, key, token string) msg {
	if l.lock.Name == "redlock-renew" {
		return l.extendQuorum(ctx, key, token)
	}
	return failed(reasonUnknown, "", "no extend for %s", l.lock.Name)
}

// ---- token-lua, watchdog: one node ----

// acquireSingle is SET k token NX PX ttl. When the reply is lost (the
// connection broke after the command was sent), it asks once more with
// the same token: a key that holds that token is the first try's, and
// ours. The watchdog starts the lease's renewal.
func (l *locker) acquireSingle(ctx context.Context, key string) msg {
	node, token, ttl := l.nodes[0], l.token(), l.ttl
	// MUTANT ttl-unit-confusion: the TTL goes out in microseconds where
	// PX takes milliseconds: the key lives 1000×TTL.
	if l.bug == "ttl-unit-confusion" {
		ttl = time.Duration(l.ttl.Microseconds()) * time.Millisecond
	}
	start := time.Now()
	set, err := abandonable(ctx, func() (bool, error) { return node.SetNX(ctx, key, token, ttl).Result() })
	// MUTANT retry-without-backoff: a refused acquire is tried again at
	// once, over and over, until the call's deadline.
	for l.bug == "retry-without-backoff" && err == nil && !set && ctx.Err() == nil {
		set, err = node.SetNX(ctx, key, token, ttl).Result()
	}
	if lostReply(ctx, err) {
		set, err = node.SetNX(ctx, key, token, ttl).Result()
		if err == nil && !set {
			// MUTANT retry-no-token-check: the retry found the key taken and
			// gave up, although the taken key may hold its own first try.
			if l.bug != "retry-no-token-check" {
				var v string
				v, err = node.Get(ctx, key).Result()
				set = err == nil && v == token
				if errors.Is(err, redis.Nil) {
					err = nil
				}
			}
		}
	}
	switch {
	case err != nil && cancelled(ctx):
		return l.cancelAcquire(ctx, key, token)
	case err != nil:
		return unknown(err, token)
	case !set:
		return failed(reasonTaken, token, "held by another owner")
	}
	if l.lock.Name == "token-validity" {
		return l.validity(ctx, key, token, start, time.Now())
	}
	if l.lock.Name == "watchdog" {
		l.startRenewal(key, token, start)
	}
	return msg{Type: typeOK, Token: token}
}

// cancelAcquire ends an acquire that lockbench cancelled before its SET
// answered: the SET may have run, or may still run, so it deletes the key
// if it holds the token (compare-and-delete, on its own short deadline).
// The key deleted, the acquire certainly did not take the lock (fail);
// otherwise its SET may yet land (unknown). Either way, reason cancelled.
func (l *locker) cancelAcquire(ctx context.Context, key, token string) msg {
	// MUTANT cancel-leaves-key: a cancelled acquire answers that it did
	// not take the lock, and leaves its key if its SET ran.
	if l.bug == "cancel-leaves-key" {
		return failed(reasonCancelled, token, "cancelled: not acquired")
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(l.ttl, 100*time.Millisecond))
	defer cancel()
	n, err := compareAndDelete.Run(cctx, l.nodes[0], []string{key}, token).Int64()
	if err == nil && n == 1 {
		return failed(reasonCancelled, token, "cancelled: its SET had run, and its key is deleted")
	}
	return msg{Type: typeUnknown, Reason: reasonCancelled, Token: token, Error: "cancelled: its SET may still land"}
}

// drift is the clock drift allowance of a validity: TTL·0.01 + 2 ms
// (redis.io distlock).
func (l *locker) drift() time.Duration {
	return time.Duration(float64(l.ttl)*0.01) + 2*time.Millisecond
}

// validity answers a granted acquire of token-validity that started at
// start and ended at end: ok with the validity left, counted from the
// start (the key was set after it); when none is left, the key is deleted
// and the acquire fails.
func (l *locker) validity(ctx context.Context, key, token string, start, end time.Time) msg {
	validUntil := start.Add(l.ttl - l.drift())
	// MUTANT validity-from-end: the validity is counted from the end of the call.
	if l.bug == "validity-from-end" {
		validUntil = end.Add(l.ttl - l.drift())
	}
	left := time.Until(validUntil)
	if left <= 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(l.ttl, 100*time.Millisecond))
		defer cancel()
		compareAndDelete.Run(cctx, l.nodes[0], []string{key}, token)
		return failed(reasonExpired, token, "the call took %v: no validity left of the TTL %v", end.Sub(start), l.ttl)
	}
	v := float64(left.Microseconds()) / 1000
	return msg{Type: typeOK, Token: token, ValidityMs: &v}
}

// releaseSingle stops the lease's renewal (watchdog), then runs
// compare-and-delete: fail with reason expired when the key is gone,
// taken when it holds another token.
func (l *locker) releaseSingle(ctx context.Context, key, token string) msg {
	// MUTANT renewal-outlives-release: the renewal is not stopped; it goes
	// on after the release, finds the key gone and says lost.
	if l.bug != "renewal-outlives-release" {
		l.stopRenewal(token)
	}
	// MUTANT release-no-token: DEL k, whoever holds it.
	if l.bug == "release-no-token" {
		n, err := l.nodes[0].Del(ctx, key).Result()
		switch {
		case err != nil:
			return unknown(err, "")
		case n == 0:
			return failed(reasonExpired, "", "not held: the key expired")
		}
		return msg{Type: typeOK}
	}
	n, err := compareAndDelete.Run(ctx, l.nodes[0], []string{key}, token).Int64()
	switch {
	case err != nil:
		return unknown(err, "")
	case n == 0:
		// MUTANT release-says-taken: a key that expired is said taken by another owner.
		if l.bug == "release-says-taken" {
			return failed(reasonTaken, "", "held by another owner")
		}
		return failed(reasonExpired, "", "not held: the key expired")
	case n < 0:
		return failed(reasonTaken, "", "held by another owner")
	}
	return msg{Type: typeOK}
}

// startRenewal runs the watchdog's renewal of a lease granted at start.
func (l *locker) startRenewal(key, token string, start time.Time) {
	ctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.renewals[token] = cancel
	l.mu.Unlock()
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		defer cancel()
		if l.renew(ctx, key, token, start) {
			l.send(msg{Type: "lost", Key: key, Token: token})
		}
	}()
}

// stopRenewal stops the renewal of the lease with token, if any.
func (l *locker) stopRenewal(token string) {
	l.mu.Lock()
	stop := l.renewals[token]
	delete(l.renewals, token)
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// renew extends the lease every TTL/3 by compare-and-PEXPIRE until ctx
// ends (release). It returns true when the lease must be taken as lost: a
// renewal found the key gone or another's, or renewals failed until the
// TTL had passed since the last good one started (the key has expired by
// then). Each renewal call is bounded by the period.
func (l *locker) renew(ctx context.Context, key, token string, start time.Time) (lost bool) {
	every := l.ttl / 3
	// MUTANT renewal-drifts: the period is the TTL plus the time a renewal
	// takes: each renewal comes after the key has expired.
	if l.bug == "renewal-drifts" {
		every = l.ttl + l.ttl/10
	}
	deadline := start.Add(l.ttl) // when the key expires at the latest
	// MUTANT lost-late: the TTL is never looked at, before a renewal nor
	// after one failed with an error: lost comes only from a 'not yours'.
	ttlMatters := l.bug != "lost-late"
	tick := time.NewTicker(every)
	defer tick.Stop()
	// expiry fires at the deadline: a lease whose renewals failed is lost
	// when the key expires, not at the next tick up to TTL/3 later (an
	// earlier version waited for the tick, and renewal-cut caught the
	// next owner granted in between).
	expiry := time.NewTimer(time.Until(deadline))
	defer expiry.Stop()
	for {
		expired := false
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		case <-expiry.C:
			expired = true
		}
		invoke := time.Now()
		lost := ttlMatters && !invoke.Before(deadline)
		if expired && !lost {
			continue // a renewal moved the deadline since the timer was set
		}
		if !lost {
			cctx, cancel := context.WithTimeout(ctx, every)
			var n int64
			var err error
			// MUTANT renewal-no-owner-check: PEXPIRE k ttl, whoever holds it.
			if l.bug == "renewal-no-owner-check" {
				var ok bool
				ok, err = l.nodes[0].PExpire(cctx, key, l.ttl).Result()
				if ok {
					n = 1
				}
			} else {
				n, err = compareAndPexpire.Run(cctx, l.nodes[0], []string{key}, token, ms(l.ttl)).Int64()
			}
			cancel()
			switch {
			case err == nil && n == 1:
				deadline = invoke.Add(l.ttl)
				expiry.Reset(time.Until(deadline))
			// MUTANT extend-trusts-missing-key: a renewal that finds the key
			// gone counts as a renewal.
			case err == nil && n == 0 && l.bug == "extend-trusts-missing-key":
				deadline = invoke.Add(l.ttl)
				expiry.Reset(time.Until(deadline))
			case err == nil:
				lost = true // gone, or another owner's
			case ctx.Err() != nil:
				return false // released meanwhile
			default:
				lost = ttlMatters && !time.Now().Before(deadline)
			}
		}
		// MUTANT renewal-swallows-errors: a lost lease is never said lost;
		// the loop goes on to the next tick.
		if lost && l.bug == "renewal-swallows-errors" {
			continue
		}
		if lost {
			return true
		}
	}
}

// ---- fenced ----

// acquireFenced sets the key and increments its fence counter in one script.
func (l *locker) acquireFenced(ctx context.Context, key string) msg {
	token := l.token()
	// MUTANT fence-expires-with-lock: the counter gets the lock's TTL.
	expire := "0"
	if l.bug == "fence-expires-with-lock" {
		expire = "1"
	}
	f, err := fencedAcquire.Run(ctx, l.nodes[0], []string{key, key + ":fence"}, token, ms(l.ttl), expire).Int64()
	switch {
	case err != nil:
		return unknown(err, token)
	case f == 0:
		return failed(reasonTaken, token, "held by another owner")
	}
	return msg{Type: typeOK, Token: token, Fence: f}
}

// ---- reentrant ----

// acquireReentrant runs the hash lock's acquire once: a lost reply is an
// unknown outcome (the script may have counted), never retried.
func (l *locker) acquireReentrant(ctx context.Context, key string) msg {
	n, err := reentrantAcquire.Run(ctx, l.nodes[0], []string{key}, l.prefix, ms(l.ttl)).Int64()
	// MUTANT reentrant-retry-counts-twice: after a lost reply the script
	// runs again (as a client library's automatic retry would), and counts again.
	if l.bug == "reentrant-retry-counts-twice" && lostReply(ctx, err) {
		n, err = reentrantAcquire.Run(ctx, l.nodes[0], []string{key}, l.prefix, ms(l.ttl)).Int64()
	}
	switch {
	case err != nil:
		return unknown(err, l.prefix)
	case n == 0:
		return failed(reasonTaken, l.prefix, "held by another owner")
	}
	return msg{Type: typeOK, Token: l.prefix, Count: int(n)}
}

// releaseReentrant gives back one level.
func (l *locker) releaseReentrant(ctx context.Context, key, token string) msg {
	n, err := reentrantRelease.Run(ctx, l.nodes[0], []string{key}, token, ms(l.ttl)).Int64()
	switch {
	case err != nil:
		return unknown(err, "")
	case n == -2:
		return failed(reasonExpired, "", "not held: the key expired")
	case n < 0:
		return failed(reasonTaken, "", "held by another owner")
	}
	return msg{Type: typeOK, Remaining: int(n)}
}

// ---- redlock, redlock-renew: five nodes ----

// Per-node answers.
const (
	nodeYes   = 1  // set, deleted or extended
	nodeGone  = 0  // the key was not there (release, extend)
	nodeTaken = -1 // another owner holds the key
)

// nodeResult is one node's answer (nodeYes, nodeGone, nodeTaken), or err:
// unknown, or, when notSent, a definite no.
type nodeResult struct {
	answer int
	err    error
}

// onAll runs fn on every node in parallel, each under the per-node
// timeout (TTL/10, at least 5 ms), and waits for all of them.
func (l *locker) onAll(ctx context.Context, fn func(ctx context.Context, c *redis.Client) (int, error)) []nodeResult {
	rs := make([]nodeResult, len(l.nodes))
	timeout := max(l.ttl/10, 5*time.Millisecond)
	// MUTANT quorum-no-node-timeout: no per-node timeout: every node gets
	// the whole call's budget, and one slow node holds up the call.
	if l.bug == "quorum-no-node-timeout" {
		timeout = time.Hour
	}
	var wg sync.WaitGroup
	for i, c := range l.nodes {
		wg.Go(func() {
			nctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			rs[i].answer, rs[i].err = fn(nctx, c)
		})
	}
	wg.Wait()
	return rs
}

// tally counts the nodes by answer: yes, another owner's (taken), and
// unknown (an error that leaves the node's outcome open); answered is
// every node that answered at all.
type tally struct{ yes, taken, unknown, answered int }

func tallyOf(rs []nodeResult) tally {
	var t tally
	for _, r := range rs {
		switch {
		case r.err == nil:
			t.answered++
			if r.answer == nodeYes {
				t.yes++
			}
			if r.answer == nodeTaken {
				t.taken++
			}
		case !notSent(r.err):
			t.unknown++
		}
	}
	return t
}

// setNX is SET k token NX PX ttl on one node: yes, or taken.
func (l *locker) setNX(key, token string) func(ctx context.Context, c *redis.Client) (int, error) {
	return func(ctx context.Context, c *redis.Client) (int, error) {
		ok, err := c.SetNX(ctx, key, token, l.ttl).Result()
		if ok {
			return nodeYes, err
		}
		return nodeTaken, err
	}
}

// script runs a compare-and-X script on one node (1 yes, 0 gone, -1 taken).
func script(sc *redis.Script, key string, args ...any) func(ctx context.Context, c *redis.Client) (int, error) {
	return func(ctx context.Context, c *redis.Client) (int, error) {
		n, err := sc.Run(ctx, c, []string{key}, args...).Int64()
		return int(n), err
	}
}

// failReason is why a quorum call failed: taken when other owners hold
// enough nodes to rule a quorum out, expired when the key is gone from
// enough of them, unavailable when too few nodes answered.
func failReason(t tally, n, quorum int) string {
	switch {
	case t.taken > n-quorum:
		return reasonTaken
	case t.answered-t.yes-t.taken > n-quorum:
		return reasonExpired
	}
	return reasonUnavailable
}

// acquireQuorum is one Redlock attempt (redis.io distlock): SET NX PX on
// every node; granted on a quorum N/2+1 with validity TTL − elapsed −
// (TTL·0.01 + 2 ms) > 0, counted from the call's start (the keys were set
// after it); otherwise compare-and-delete on every node. The per-node
// timeout (TTL/10) keeps a slow node from eating the validity.
func (l *locker) acquireQuorum(ctx context.Context, key string) msg {
	token := l.token()
	start := time.Now()
	t := tallyOf(l.onAll(ctx, l.setNX(key, token)))
	n, quorum := len(l.nodes), len(l.nodes)/2+1
	// MUTANT quorum-of-half: N/2 nodes make a quorum.
	if l.bug == "quorum-of-half" {
		quorum = n / 2
	}
	// MUTANT quorum-from-reachable: a majority of the nodes that answered.
	if l.bug == "quorum-from-reachable" {
		quorum = t.answered/2 + 1
	}
	validUntil := start.Add(l.ttl - l.drift())
	if t.yes >= quorum && time.Until(validUntil) > 0 {
		v := float64(time.Until(validUntil).Microseconds()) / 1000
		return msg{Type: typeOK, Token: token, ValidityMs: &v}
	}
	// MUTANT no-unlock-on-failure: the nodes it did lock stay locked until their TTL.
	if l.bug != "no-unlock-on-failure" {
		l.onAll(context.WithoutCancel(ctx), script(compareAndDelete, key, token))
	}
	switch {
	case t.yes >= quorum:
		return failed(reasonExpired, token, "quorum %d of %d but no validity left", t.yes, n)
	case t.yes+t.unknown >= quorum:
		return msg{Type: typeUnknown, Reason: reasonUnknown, Token: token,
			Error: fmt.Sprintf("%d of %d nodes and %d unknown could make quorum %d", t.yes, n, t.unknown, quorum)}
	}
	return failed(failReason(t, n, quorum), token, "%d of %d nodes, %d held by others, quorum %d", t.yes, n, t.taken, quorum)
}

// releaseQuorum is compare-and-delete on every node: ok when a quorum
// deleted it, fail when every node answered and none held it, else unknown.
func (l *locker) releaseQuorum(ctx context.Context, key, token string) msg {
	t := tallyOf(l.onAll(ctx, script(compareAndDelete, key, token)))
	n, quorum := len(l.nodes), len(l.nodes)/2+1
	switch {
	case t.yes >= quorum:
		return msg{Type: typeOK}
	case t.yes == 0 && t.unknown == 0:
		return failed(failReason(t, n, quorum), "", "held on no node (%d held by others)", t.taken)
	}
	return msg{Type: typeUnknown, Reason: reasonUnknown, Error: fmt.Sprintf("released on %d of %d nodes, %d unknown", t.yes, n, t.unknown)}
}

// extendQuorum is compare-and-PEXPIRE on every node: ok on a quorum, with
// the validity of the renewed lease counted from the call's start; fail
// when the nodes that can still say yes are fewer than a quorum; else
// unknown.
func (l *locker) extendQuorum(ctx context.Context, key, token string) msg {
	start := time.Now()
	rs := l.onAll(ctx, script(compareAndPexpire, key, token, ms(l.ttl)))
	validUntil := start.Add(l.ttl - l.drift())
	renewed := func() msg {
		v := float64(max(time.Until(validUntil), 0).Microseconds()) / 1000
		return msg{Type: typeOK, ValidityMs: &v}
	}
	// MUTANT extend-releases-all: one node's error releases the lock on
	// every node, and the extend still answers ok.
	if l.bug == "extend-releases-all" {
		for _, r := range rs {
			if r.err != nil {
				l.onAll(context.WithoutCancel(ctx), script(compareAndDelete, key, token))
				return renewed()
			}
		}
	}
	t := tallyOf(rs)
	n, quorum := len(l.nodes), len(l.nodes)/2+1
	// MUTANT extend-any-node: one node that renewed counts as renewed,
	// whatever the others said.
	if l.bug == "extend-any-node" {
		quorum = 1
	}
	switch {
	case t.yes >= quorum:
		return renewed()
	case t.yes+t.unknown < quorum:
		return failed(failReason(t, n, quorum), "", "extended on %d of %d nodes, quorum %d", t.yes, n, quorum)
	}
	return msg{Type: typeUnknown, Reason: reasonUnknown, Error: fmt.Sprintf("extended on %d of %d nodes, %d unknown", t.yes, n, t.unknown)}
}
