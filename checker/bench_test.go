package checker

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
)

// TestSynthHistoryVerdicts checks the benchmarks' generator on a small
// history: clean it is ok for exclusion and resource; with plants each
// check finds exactly the planted violations.
func TestSynthHistoryVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   synthSpec
		status Status
	}{
		{"clean one key", synthSpec{ops: 2000, keys: 1, clients: 16, seed: 1}, OK},
		{"clean many keys", synthSpec{ops: 2000, keys: 16, clients: 16, seed: 2}, OK},
		{"planted one key", synthSpec{ops: 2000, keys: 1, clients: 16, plants: 3, seed: 3}, Violated},
		{"planted many keys", synthSpec{ops: 2000, keys: 16, clients: 256, plants: 5, seed: 4}, Violated},
		{"clean blocking", synthSpec{ops: 2000, keys: 1, clients: 64, seed: 5, blocking: true}, OK},
		{"planted blocking", synthSpec{ops: 2000, keys: 1, clients: 64, plants: 4, seed: 6, blocking: true}, Violated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ops, planted := synthHistory(tc.spec)
			for name, f := range map[string]func(history.Header, []history.Operation, Options) Result{"exclusion": Exclusion, "resource": Resource} {
				got := f(h, ops, Options{})
				if got.Status != tc.status || got.Violations != planted {
					t.Errorf("%s: %s with %d violations, want %s with %d: %s", name, got.Status, got.Violations, tc.status, planted, got.Message)
				}
			}
		})
	}
}

// peakMeter samples the live heap every 5 ms while a check runs and reads
// the process's peak RSS (VmHWM, reset through /proc/self/clear_refs).
type peakMeter struct {
	stop chan struct{}
	wg   sync.WaitGroup
	base uint64
	peak uint64
	rss  bool
}

var heapMetric = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapBytes() uint64 {
	s := make([]metrics.Sample, 1)
	copy(s, heapMetric)
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startPeak() *peakMeter {
	runtime.GC()
	m := &peakMeter{stop: make(chan struct{}), base: heapBytes()}
	m.rss = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > m.peak {
				m.peak = h
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// done stops sampling and returns the peak live heap (history included:
// m.base is the heap before the check)
// and the peak RSS of the process in bytes (0 if unknown).
func (m *peakMeter) done() (heap, rss uint64) {
	close(m.stop)
	m.wg.Wait()
	if h := heapBytes(); h > m.peak {
		m.peak = h
	}
	if m.rss {
		rss = vmHWM()
	}
	return m.peak, rss
}

// vmHWM reads the process's peak resident set size from /proc/self/status.
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// benchCheck is one checker benchmark: exclusion or resource on a
// synthetic history of ops operations over keys keys with clients clients
// and 10 planted violations. It fails on a wrong verdict; an inconclusive
// result (porcupine ran out of its 60 s) is reported as the metric
// inconclusive=1 with the checker's reason, not as a failure.
func benchCheck(b *testing.B, check func(history.Header, []history.Operation, Options) Result, ops, keys, clients int) {
	benchSpec(b, check, synthSpec{ops: ops, keys: keys, clients: clients, plants: 10, seed: 7})
}

func benchSpec(b *testing.B, check func(history.Header, []history.Operation, Options) Result, spec synthSpec) {
	h, hist, planted := synthHistory(spec)
	o := Options{Timeout: 60 * time.Second}
	var heapPeak, rssPeak, heapBase uint64
	inconclusive := 0.0
	b.ResetTimer()
	for b.Loop() {
		m := startPeak()
		r := check(h, hist, o)
		hp, rp := m.done()
		heapBase = m.base
		heapPeak, rssPeak = max(heapPeak, hp), max(rssPeak, rp)
		switch {
		case r.Status == Inconclusive:
			inconclusive = 1
			b.Logf("inconclusive: %s", r.Message)
		case r.Status != Violated || r.Violations != planted:
			b.Fatalf("verdict %s with %d violations, want violated with %d planted: %s", r.Status, r.Violations, planted, r.Message)
		}
	}
	b.ReportMetric(float64(len(hist))*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(heapPeak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(heapBase)/(1<<20), "history-heap-MB")
	if rssPeak > 0 {
		b.ReportMetric(float64(rssPeak)/(1<<20), "peak-RSS-MB")
	}
	b.ReportMetric(inconclusive, "inconclusive")
}

// benchSizes are the history sizes, keys and clients of the checker
// benchmarks (docs/performance.md). The 1M-operation ones take tens of seconds each:
// run them with -benchtime 1x, e.g.
//
//	go test -run XXX -bench 'Exclusion/ops=1000000' -benchtime 1x ./checker/
var benchSizes = struct{ ops, keys, clients []int }{
	ops: []int{10_000, 100_000, 1_000_000}, keys: []int{1, 16, 100}, clients: []int{16, 256},
}

func benchAll(b *testing.B, check func(history.Header, []history.Operation, Options) Result) {
	for _, n := range benchSizes.ops {
		for _, k := range benchSizes.keys {
			for _, c := range benchSizes.clients {
				b.Run(fmt.Sprintf("ops=%d/keys=%d/clients=%d", n, k, c), func(b *testing.B) { benchCheck(b, check, n, k, c) })
			}
		}
	}
}

// BenchmarkExclusion measures Exclusion (holds, sweep-line and porcupine).
func BenchmarkExclusion(b *testing.B) { benchAll(b, Exclusion) }

// BenchmarkResource measures Resource (porcupine and the lost-update replay).
func BenchmarkResource(b *testing.B) { benchAll(b, Resource) }

// BenchmarkContended checks the hard case: 100k operations on one
// key from 256 clients whose acquires block until the key is free, so every
// acquire is a hold and up to 256 acquires are pending at once (in the
// synthetic histories of BenchmarkExclusion most contended acquires fail,
// and failed acquires are not holds).
func BenchmarkContended(b *testing.B) {
	spec := synthSpec{ops: 100_000, keys: 1, clients: 256, plants: 10, seed: 7, blocking: true}
	b.Run("exclusion", func(b *testing.B) { benchSpec(b, Exclusion, spec) })
	b.Run("resource", func(b *testing.B) { benchSpec(b, Resource, spec) })
}
