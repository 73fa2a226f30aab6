package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/synth"
)

// BenchmarkCheckHistory measures `lockbench check` on a generated history
// file: history.Load, then CheckHistory (every check, the judgement, the
// figures), as the command runs them. The history is synth.Generate's
// correct lock on 50 keys by 50 clients with 10 planted overlaps (each
// also a lost update), written by history's own Writer. Besides the time
// per check it reports:
//
//   - ops/s: operations per second of wall time;
//   - ops/cpu-s: operations per second of the process's CPU time (user +
//     system, getrusage), what the wall figure is on an idle machine with
//     one core; on a busy machine the wall figure falls and this one
//     hardly moves (docs/performance.md);
//   - load-%: the share of the CPU time spent in history.Load;
//   - peak-heap-MB, peak-RSS-MB: the live heap's peak (sampled every 5 ms)
//     and the process's peak resident set (VmHWM, reset before each check).
//
// The target (docs/performance.md): 1M operations in ≤ 3 s (≥ 333k ops/s)
// in ≤ 1 GB. Run it with -benchtime 1x (each iteration checks the whole file):
//
//	go test ./validate -run XXX -bench CheckHistory -benchtime 1x
func BenchmarkCheckHistory(b *testing.B) {
	for _, n := range []int{150_000, 1_000_000} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) { benchCheckHistory(b, n) })
	}
}

func benchCheckHistory(b *testing.B, n int) {
	path := filepath.Join(b.TempDir(), "synth.jsonl")
	h, gen, planted := synth.Generate(synth.Spec{Ops: n, Keys: 50, Clients: 50, Plants: 10, Seed: 1})
	if err := synth.Write(path, h, gen); err != nil {
		b.Fatal(err)
	}
	gen = nil
	var cpu, loadCPU time.Duration
	var heapPeak, rssPeak uint64
	ops := 0
	b.ResetTimer()
	for b.Loop() {
		m := startMeter()
		c0 := cpuTime()
		h, hist, err := history.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		c1 := cpuTime()
		run, _, _, err := CheckHistory(path, h, hist, checker.Options{Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		c2 := cpuTime()
		hp, rp := m.done()
		heapPeak, rssPeak = max(heapPeak, hp), max(rssPeak, rp)
		cpu += c2 - c0
		loadCPU += c1 - c0
		ops = len(hist)
		if run.Verdict.Exclusion != checker.Violated || run.Violations != 2*planted {
			b.Fatalf("exclusion %s with %d violations, want violated with %d (overlaps and lost updates)", run.Verdict.Exclusion, run.Violations, 2*planted)
		}
	}
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(ops)*float64(b.N)/cpu.Seconds(), "ops/cpu-s")
	b.ReportMetric(100*loadCPU.Seconds()/cpu.Seconds(), "load-%")
	b.ReportMetric(float64(heapPeak)/(1<<20), "peak-heap-MB")
	if rssPeak > 0 {
		b.ReportMetric(float64(rssPeak)/(1<<20), "peak-RSS-MB")
	}
}

// cpuTime is the process's CPU time so far (user + system, every thread).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meter samples the live heap every 5 ms and reads the process's peak RSS
// (VmHWM, reset through /proc/self/clear_refs at the start).
type meter struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak uint64
	rss  bool
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startMeter() *meter {
	runtime.GC()
	m := &meter{stop: make(chan struct{})}
	m.rss = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			m.peak = max(m.peak, heapBytes())
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// done stops sampling and returns the peak live heap and peak RSS in bytes
// (RSS 0 if unknown).
func (m *meter) done() (heap, rss uint64) {
	close(m.stop)
	m.wg.Wait()
	m.peak = max(m.peak, heapBytes())
	if m.rss {
		b, _ := os.ReadFile("/proc/self/status")
		for _, line := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
				if f := bytes.Fields(v); len(f) > 0 {
					kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
					rss = kb * 1024
				}
			}
		}
	}
	return m.peak, rss
}
