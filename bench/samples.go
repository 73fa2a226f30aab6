package bench

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
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
	b, ok := impl.BudgetOf(st, ttl)
	if !ok {
		return nil
	}
	return results.EnvelopeOf(ms(int64(b.Time)), b.Scope, b.Rule, n, faulted)
}
