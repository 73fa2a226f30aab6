package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/commandstats"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"

	"github.com/redis/go-redis/v9"
)

// counterEvery is how often a run samples its clients' command counter:
// each window's commands per grant interpolate between two samples, so a
// period far below a window (a sixth of a run, 167 ms in the ci profile)
// keeps that error small.
const counterEvery = 5 * time.Millisecond

// sampleCounter samples n every counterEvery, stamped with clock's time,
// until the returned stop is called; stop takes a last sample and returns
// the series (a second call returns the same series).
func sampleCounter(clock *history.Clock, n *atomic.Int64) (stop func() []results.CounterSample) {
	var (
		mu     sync.Mutex
		series []results.CounterSample
		once   sync.Once
	)
	take := func() {
		s := results.CounterSample{AtMs: ms(clock.Now()), Commands: n.Load()}
		mu.Lock()
		series = append(series, s)
		mu.Unlock()
	}
	take()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(counterEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				take()
			}
		}
	}()
	return func() []results.CounterSample {
		once.Do(func() {
			close(done)
			<-finished
			take()
		})
		mu.Lock()
		defer mu.Unlock()
		return series
	}
}

// envelopeOf judges strategy st's call budget at TTL ttl against the
// round trips in n (results.EnvelopeOf); nil when st declares no budget.
func envelopeOf(st impl.Strategy, ttl time.Duration, n *noise.Summary, faulted bool) *results.Envelope {
	b, ok := strategies.BudgetOf(st, ttl)
	if !ok {
		return nil
	}
	return results.EnvelopeOf(ms(int64(b.Time)), b.Scope, b.Rule, n, faulted)
}

// serverCounterEvery is how often a run whose commands lockbench's
// client counter cannot see (an exec: adapter sends its own) samples the
// servers' command counts (INFO commandstats on every node): a tenth of
// a ci window, at one INFO per node, a cost the servers do not notice.
const serverCounterEvery = 25 * time.Millisecond

// sampleServerCounter samples the commands the servers at addrs executed
// (commandstats.CommandCalls: primaries only, the harness's own commands left
// out) every serverCounterEvery, counted from the first sample and
// stamped with clock's time, until the returned stop is called; stop
// takes a last sample and returns the series. A node that does not
// answer, restarts or changes role leaves its sample out (the series
// goes on from what the others say); nil when the first sample fails.
func sampleServerCounter(ctx context.Context, clock *history.Clock, addrs []string, sec security.Security) (stop func() []results.CounterSample) {
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = commandstats.InfoClient(a, time.Second, sec)
	}
	base := make([]commandstats.NodeCalls, len(addrs))
	var (
		mu     sync.Mutex
		series []results.CounterSample
	)
	take := func(first bool) {
		var n int64
		for i, c := range clients {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			nc, err := commandstats.Read(cctx, c)
			cancel()
			switch {
			case err != nil:
				continue
			case first:
				base[i] = nc
				continue
			case nc.RunID != base[i].RunID || nc.Role != "master" || base[i].Role != "master":
				continue
			}
			n += nc.Calls - base[i].Calls
		}
		mu.Lock()
		series = append(series, results.CounterSample{AtMs: ms(clock.Now()), Commands: n})
		mu.Unlock()
	}
	take(true)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(serverCounterEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				take(false)
			}
		}
	}()
	var once sync.Once
	return func() []results.CounterSample {
		once.Do(func() {
			close(done)
			<-finished
			take(false)
			for _, c := range clients {
				c.Close()
			}
		})
		mu.Lock()
		defer mu.Unlock()
		return series
	}
}

// scaleCounter scales a server counter series so that its last sample is
// total (the run's server commands with the observer's reads taken out):
// the observer reads the keys through the same servers, and its share is
// spread over the run in proportion to the commands.
func scaleCounter(series []results.CounterSample, total int64) []results.CounterSample {
	if len(series) == 0 || series[len(series)-1].Commands <= 0 {
		return series
	}
	f := float64(total) / float64(series[len(series)-1].Commands)
	out := make([]results.CounterSample, len(series))
	for i, s := range series {
		out[i] = results.CounterSample{AtMs: s.AtMs, Commands: int64(float64(s.Commands) * f)}
	}
	return out
}
