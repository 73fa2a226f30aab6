// Package noise measures how busy the machine is while lockbench runs: the
// CPU that processes other than lockbench and its servers use, CPU steal
// and the run queue (sampled from /proc), and the round-trip time to each
// server (PING, before and during the run). A run whose cost figures were
// taken on a busy machine (Summary.Busy, thresholds BusyOtherCores and
// BusySteal) is marked in results.json and the report, with the numbers.
//
// It reads Linux's /proc only; elsewhere the CPU figures are left out and
// Summary.Error says why.
package noise

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Thresholds of Busy.
const (
	// BusyOtherCores: a run is busy when processes other than lockbench
	// and its servers used more than a quarter of a core on average
	// during it (0.25 cores: on the 2-core machines lockbench targets, an
	// eighth of the machine, enough to move grants/s by more than the
	// ±5% a quiet machine shows between windows).
	BusyOtherCores = 0.25
	// BusySteal: a run is busy when the hypervisor stole more than 5% of
	// the CPU time on average during it (a share of all cores' time).
	BusySteal = 0.05
)

// DefaultEvery is the default sampling period of a Sampler.
const DefaultEvery = 100 * time.Millisecond

// DefaultPings is how many PINGs Start sends each server before the run.
const DefaultPings = 50

// Options configure a Sampler. Zero values select the defaults.
type Options struct {
	// Every is the period at which /proc is read and each server PINGed
	// once; default DefaultEvery (100 ms).
	Every time.Duration
	// Servers are Redis servers (host:port) whose round-trip time is
	// measured: Pings PINGs each before sampling starts (RTTBefore), then
	// one each period (RTTDuring). Default: none.
	Servers []string
	// Pings is how many PINGs each server gets before the run; default
	// DefaultPings (50).
	Pings int
	// PIDs are processes whose CPU counts as the run's own, besides this
	// process and its descendants (e.g. servers in containers, which are
	// not lockbench's children). Default: none.
	PIDs []int
	// Proc is where the proc file system is mounted; default "/proc".
	Proc string
	// Probes are round trips to servers that do not speak Redis (etcd,
	// ZooKeeper), each measured as Servers are: Pings before the run, one
	// each period during it, after Servers in RTTBefore and RTTDuring.
	// Default: none.
	Probes []Probe
}

// Probe is one round trip to a server through its own protocol, for the
// servers PING does not reach: e.g. a serializable etcd read, a ZooKeeper
// exists call. RoundTrip must return when ctx ends.
type Probe struct {
	// Server names the server (host:port, or the ensemble's addresses).
	Server string
	// RoundTrip makes one round trip; an error counts as a failed one.
	RoundTrip func(ctx context.Context) error
}

func (o Options) withDefaults() Options {
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Pings <= 0 {
		o.Pings = DefaultPings
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	return o
}

// Summary is what a Sampler measured during a run.
type Summary struct {
	// Samples is how many /proc readings went into the CPU figures (one
	// per period after the first, which is the baseline).
	Samples int `json:"samples"`
	// EveryMs is the sampling period, in ms.
	EveryMs float64 `json:"every_ms"`
	// OtherCPUCores is the CPU time that processes other than lockbench,
	// its descendants (the servers of the process backend) and
	// Options.PIDs used, in cores (1 = one core fully busy), per period:
	// user+nice+system time of /proc/stat minus the utime+stime of those
	// processes (/proc/PID/stat). Interrupt time is left out of both
	// (loopback traffic of the run itself is spent there).
	OtherCPUCores Stat `json:"other_cpu_cores"`
	// StealShare is the share (0..1) of all cores' time the hypervisor
	// gave to other guests (/proc/stat steal), per period.
	StealShare Stat `json:"steal_share"`
	// RunQueue is the number of runnable tasks (procs_running of
	// /proc/stat, the run's own threads and the sampler included), per
	// reading; compare it with host.cpus.
	RunQueue Stat `json:"run_queue"`
	// RTTBefore is the round-trip time to each server before the run
	// (Options.Pings PINGs on one connection, idle servers).
	RTTBefore []RTT `json:"rtt_before,omitempty"`
	// RTTDuring is the round-trip time to each server during the run (one
	// PING per period, under the run's load: what a lock call waits for
	// besides the server's work).
	RTTDuring []RTT `json:"rtt_during,omitempty"`
	// Busy is true when the machine was too busy for the run's cost
	// figures to compare with a quiet run's: OtherCPUCores.Mean above
	// BusyOtherCores or StealShare.Mean above BusySteal.
	Busy bool `json:"busy"`
	// Why gives the numbers that made the run busy, e.g. "other processes
	// used 0.61 cores on average (max 1.4; threshold 0.25)"; empty when
	// not busy.
	Why string `json:"why,omitempty"`
	// Error says why the CPU figures could not be measured (e.g. no
	// /proc); empty when they were.
	Error string `json:"error,omitempty"`
}

// Stat is the mean and maximum of a figure over a run's samples; its unit
// is the figure's.
type Stat struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// RTT is the round-trip time to one server: a PING and its reply, in ms.
type RTT struct {
	// Server is the server's address (host:port).
	Server string `json:"server"`
	// P50Ms and P99Ms are percentiles of the round trips, in ms.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// N is how many round trips went in.
	N int `json:"n"`
	// Failed is how many PINGs got no reply in time (left out of the
	// percentiles).
	Failed int `json:"failed,omitempty"`
}

// MaxP99Ms returns the largest P99Ms of rtts (0 when none has a round trip).
func MaxP99Ms(rtts []RTT) float64 {
	m := 0.0
	for _, r := range rtts {
		if r.N > 0 {
			m = max(m, r.P99Ms)
		}
	}
	return m
}

// judge sets Busy and Why from the CPU figures.
func (s *Summary) judge() {
	var why []string
	if s.Samples > 0 && s.OtherCPUCores.Mean > BusyOtherCores {
		why = append(why, fmt.Sprintf("other processes used %.2f cores on average (max %.2f; threshold %.2f)", s.OtherCPUCores.Mean, s.OtherCPUCores.Max, BusyOtherCores))
	}
	if s.Samples > 0 && s.StealShare.Mean > BusySteal {
		why = append(why, fmt.Sprintf("steal took %.1f%% of the CPU time on average (max %.1f%%; threshold %.0f%%)", 100*s.StealShare.Mean, 100*s.StealShare.Max, 100*BusySteal))
	}
	s.Busy = len(why) > 0
	s.Why = strings.Join(why, "; ")
}

// Sampler samples the machine in the background from Start until Stop.
type Sampler struct {
	o      Options
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	sum   Summary
	ticks int // periods sampled so far
}

// Start measures the round-trip time to each of o.Servers (RTTBefore; all
// servers at once, bounded by ctx and by 200 ms a PING), then samples /proc and
// PINGs every server each o.Every in a goroutine until Stop or until ctx
// ends. It never fails: what cannot be measured is left out of the
// Summary (its Error says why for the CPU figures).
func Start(ctx context.Context, o Options) *Sampler {
	o = o.withDefaults()
	s := &Sampler{o: o, done: make(chan struct{})}
	s.sum.EveryMs = float64(o.Every) / float64(time.Millisecond)
	// Every server at once (one connection each): a run with five servers
	// waits for the slowest, not for the sum.
	s.sum.RTTBefore = make([]RTT, len(o.Servers)+len(o.Probes))
	var wg sync.WaitGroup
	for i, addr := range o.Servers {
		wg.Go(func() { s.sum.RTTBefore[i] = pingN(ctx, &pinger{addr: addr}, o.Pings) })
	}
	for i, pr := range o.Probes {
		wg.Go(func() {
			s.sum.RTTBefore[len(o.Servers)+i] = pingN(ctx, &pinger{addr: pr.Server, rt: pr.RoundTrip}, o.Pings)
		})
	}
	wg.Wait()
	var sctx context.Context
	sctx, s.cancel = context.WithCancel(ctx)
	go s.loop(sctx)
	return s
}

// Stop ends the sampling and returns the Summary, with Busy judged. It may
// be called more than once (later calls return the same Summary).
func (s *Sampler) Stop() Summary {
	s.once.Do(func() {
		s.cancel()
		<-s.done
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum
}

// loop reads /proc and PINGs the servers every period until ctx ends.
func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	r := newReader(s.o.Proc, s.o.PIDs)
	pingers := make([]*pinger, 0, len(s.o.Servers)+len(s.o.Probes))
	for _, addr := range s.o.Servers {
		pingers = append(pingers, &pinger{addr: addr})
	}
	for _, pr := range s.o.Probes {
		pingers = append(pingers, &pinger{addr: pr.Server, rt: pr.RoundTrip})
	}
	defer func() {
		for _, p := range pingers {
			p.close()
		}
	}()
	var acc cpuAccumulator
	prev, err := r.read()
	if err != nil {
		acc.err = err
	}
	t := time.NewTicker(s.o.Every)
	defer t.Stop()
	finish := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		acc.summarize(&s.sum)
		for _, p := range pingers {
			s.sum.RTTDuring = append(s.sum.RTTDuring, p.rtt())
		}
		s.sum.judge()
	}
	for {
		select {
		case <-ctx.Done():
			finish()
			return
		case <-t.C:
		}
		if acc.err == nil {
			cur, err := r.read()
			if err != nil {
				acc.err = err
			} else {
				acc.add(prev, cur)
				prev = cur
			}
		}
		for _, p := range pingers {
			p.ping(ctx, s.o.Every)
		}
		s.mu.Lock()
		s.ticks++
		s.mu.Unlock()
	}
}
