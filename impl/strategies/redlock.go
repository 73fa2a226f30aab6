package strategies

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// redlock is the Redlock algorithm of the redis.io distlock page on N
// independent nodes.
type redlock struct{}

// Name returns "redlock".
func (redlock) Name() string { return "redlock" }

// Info describes redlock: quorum acquire with a validity deadline.
func (redlock) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: SET k token NX PX ttl on N independent nodes in parallel (per-node timeout), ok on a quorum N/2+1 with validity TTL − elapsed − (TTL·drift + 2ms) > 0, else unlock all; release: Lua compare-and-delete on all nodes",
		Source:  "redis.io \"Distributed Locks with Redis\" (distlock page), the Redlock algorithm",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Quorum: true, Validity: true},
		Policy:  impl.Policy{CheckValidity: true},
		Nodes:   5,
	}
}

// New returns a redlock Locker on cfg.Nodes (at least one; 5 by default in
// runs). Quorum is len(cfg.Nodes)/2+1.
func (s redlock) New(cfg impl.Config) (impl.Locker, error) {
	cfg, err := prepare(s.Name(), cfg, 0)
	if err != nil {
		return nil, err
	}
	t, err := newTokens(cfg.Owner)
	if err != nil {
		return nil, err
	}
	return &redlockLocker{cfg: cfg, tokens: t, quorum: len(cfg.Nodes)/2 + 1}, nil
}

type redlockLocker struct {
	cfg    impl.Config
	tokens *tokens
	quorum int
}

// nodeResult is one node's answer: ok (set or deleted), or err (unknown).
type nodeResult struct {
	ok  bool
	err error
}

// answered counts the nodes that answered (no error).
func answered(rs []nodeResult) int {
	n := 0
	for _, r := range rs {
		if r.err == nil {
			n++
		}
	}
	return n
}

// tally counts node results: ok, and unknown (an error that leaves the
// node's outcome open). With definite, errors that prove the command was
// never sent (notSent) count as neither: the node certainly did nothing.
func tally(rs []nodeResult, definite bool) (ok, unknown int) {
	for _, r := range rs {
		switch {
		case r.err != nil && !(definite && notSent(r.err)):
			unknown++
		case r.err == nil && r.ok:
			ok++
		}
	}
	return ok, unknown
}

// nodeErrors joins the nodes' errors; nil if there are none.
func nodeErrors(rs []nodeResult) error {
	var errs []error
	for _, r := range rs {
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return errors.Join(errs...)
}

// describe lists each node's outcome for error messages: "n1 ok, n2 no, n3: <err>".
func (l *redlockLocker) describe(rs []nodeResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		switch {
		case r.err != nil:
			parts[i] = fmt.Sprintf("%s: %v", l.cfg.NodeNames[i], r.err)
		case r.ok:
			parts[i] = l.cfg.NodeNames[i] + " ok"
		default:
			parts[i] = l.cfg.NodeNames[i] + " no"
		}
	}
	return strings.Join(parts, ", ")
}

// onAll runs fn on every node in parallel, each under its own NodeTimeout,
// waits for all of them, and reports each node's call to cfg.OnNodeCall
// (call is "acquire" or "release"; a false ok is reported as no, the
// sentinel error of that call).
func (l *redlockLocker) onAll(ctx context.Context, call, key, token string, fn func(ctx context.Context, c redis.UniversalClient) (bool, error)) []nodeResult {
	rs := make([]nodeResult, len(l.cfg.Nodes))
	var wg sync.WaitGroup
	for i, c := range l.cfg.Nodes {
		wg.Go(func() {
			nctx, cancel := context.WithTimeout(ctx, l.cfg.NodeTimeout)
			defer cancel()
			invoke := l.cfg.Now()
			rs[i].ok, rs[i].err = fn(nctx, c)
			if l.cfg.OnNodeCall != nil {
				no := impl.ErrNotAcquired
				if call == "release" {
					no = impl.ErrNotHeld
				}
				outcome := rs[i].err
				switch {
				case outcome == nil && !rs[i].ok:
					outcome = no
				case outcome != nil && notSent(outcome):
					// never sent: certainly no effect on this node
					outcome = fmt.Errorf("command never sent (%v): %w", outcome, no)
				}
				l.cfg.OnNodeCall(l.cfg.NodeNames[i], call, key, token, invoke, l.cfg.Now(), outcome)
			}
		})
	}
	wg.Wait()
	return rs
}

// redlockDriftConstant is the constant part of Redlock's drift allowance
// (the redis.io distlock page's 2 ms).
const redlockDriftConstant = 2 * time.Millisecond

// Acquire makes one Redlock attempt (no retry). With start and end read
// from cfg.Now before and after the parallel SET NX PX, the validity is
// TTL − (end − start) − (TTL·DriftFactor + 2ms), and the lease's Validity
// deadline is end + validity (= start + TTL − drift allowance: the keys
// were set after start). If fewer than a quorum of nodes said OK, or the
// validity is not positive, it unlocks every node (best effort) and returns
// ErrNotAcquired, except when the nodes with an unknown outcome could
// complete a quorum: then the outcome is unknown and it returns another
// error. A node whose command was provably never sent (connection refused,
// dial timeout: see notSent) counts as a definite "no", so a majority of
// dead nodes gives ErrNotAcquired.
func (l *redlockLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	start := l.cfg.Now()
	token := l.tokens.next()
	rs := l.onAll(ctx, "acquire", key, token, func(ctx context.Context, c redis.UniversalClient) (bool, error) {
		return setNXPX(ctx, c, key, token, l.cfg.TTL)
	})
	end := l.cfg.Now()
	ok, unknown := tally(rs, true)
	drift := time.Duration(float64(l.cfg.TTL)*l.cfg.DriftFactor) + redlockDriftConstant
	validity := l.cfg.TTL - end.Sub(start) - drift
	if ok >= l.quorum && validity > 0 {
		return &impl.Lease{Key: key, Token: token, Start: start, End: end, Validity: end.Add(validity)}, nil
	}
	// Unlock every node, also those that failed or timed out: their SET may
	// have landed. Best effort, even if ctx has ended.
	l.onAll(context.WithoutCancel(ctx), "release", key, token, func(ctx context.Context, c redis.UniversalClient) (bool, error) {
		return compareAndDelete(ctx, c, key, token)
	})
	// Every error carries the token tried: a node may keep it (its unlock
	// failed). Reasons: taken when a quorum answered and too few said OK,
	// unavailable when too few answered; none when the quorum came too late.
	n := len(rs)
	reason := impl.ReasonTaken
	if answered(rs) < l.quorum {
		reason = impl.ReasonUnavailable
	}
	switch {
	case ok >= l.quorum:
		return nil, impl.WithToken(fmt.Errorf("redlock: acquire %q: quorum %d/%d but validity %v <= 0 (%s): %w",
			key, ok, n, validity, l.describe(rs), impl.ErrNotAcquired), token)
	case ok+unknown >= l.quorum:
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("redlock: acquire %q: outcome unknown: %d ok + %d unknown of %d could make quorum %d (%s): %w",
			key, ok, unknown, n, l.quorum, l.describe(rs), nodeErrors(rs)), impl.ReasonUnavailable), token)
	default:
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("redlock: acquire %q: %d ok of %d, quorum %d (%s): %w",
			key, ok, n, l.quorum, l.describe(rs), impl.ErrNotAcquired), reason), token)
	}
}

// Release runs compare-and-delete on every node in parallel (per-node
// timeout). It returns 0 and nil if the key was deleted on a quorum,
// ErrNotHeld if every node answered and none held the lease's token, and
// an unknown-outcome error otherwise (also when a node was unreachable: it
// may still hold the key, e.g. after a restart with persistence).
func (l *redlockLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	if lease == nil {
		return 0, fmt.Errorf("redlock: release of a nil lease: %w", impl.ErrNotHeld)
	}
	var taken atomic.Int32 // nodes that hold another owner's token
	rs := l.onAll(ctx, "release", lease.Key, lease.Token, func(ctx context.Context, c redis.UniversalClient) (bool, error) {
		n, err := scriptRelease.Run(ctx, c, []string{lease.Key}, lease.Token).Int64()
		if err == nil && n == 0 {
			taken.Add(1)
		}
		return n == 1, err
	})
	released, unknown := tally(rs, false)
	switch {
	case released >= l.quorum:
		return 0, nil
	case released == 0 && unknown == 0:
		// Reason: taken when a quorum of nodes holds another owner's key,
		// else expired (the key is gone where it is not another's).
		reason := impl.ReasonExpired
		if int(taken.Load()) >= l.quorum {
			reason = impl.ReasonTaken
		}
		return 0, impl.WithReason(fmt.Errorf("redlock: release %q: held on no node (%s): %w", lease.Key, l.describe(rs), impl.ErrNotHeld), reason)
	default:
		err := fmt.Errorf("redlock: release %q: outcome unknown: released on %d of %d, quorum %d (%s)",
			lease.Key, released, len(rs), l.quorum, l.describe(rs))
		if nerr := nodeErrors(rs); nerr != nil {
			err = fmt.Errorf("%w: %w", err, nerr)
		}
		reason := ""
		if answered(rs) < l.quorum {
			reason = impl.ReasonUnavailable
		}
		return 0, impl.WithReason(err, reason)
	}
}

// Close does nothing: redlock has no background work.
func (l *redlockLocker) Close() error { return nil }

// CallBudget returns redlock's per-node timeout at TTL ttl: the default of
// Config.NodeTimeout, TTL/10 but at least 5 ms, for each node's call.
func (redlock) CallBudget(ttl time.Duration) CallBudget {
	return CallBudget{Time: impl.Config{TTL: ttl}.WithDefaults().NodeTimeout, Scope: BudgetEachNode, Rule: "TTL/10, at least 5 ms (per-node timeout)"}
}
