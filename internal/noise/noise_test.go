package noise

import (
	"context"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
)

// procStat is a /proc/stat of a 2-core virtual machine (trimmed).
const procStat = `cpu  48512 7 24745 71030 480 30 1570 210 90 0
cpu0 23514 3 11925 36845 66 15 745 100 45 0
cpu1 24998 4 12820 34184 414 15 824 110 45 0
intr 1427604 0 0 0
ctxt 2903591
btime 1764633143
processes 19384
procs_running 3
procs_blocked 0
`

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    snapshot
		wantErr string
	}{
		{"two cores", procStat, snapshot{cpus: 2, busy: 48512 + 7 + 24745, total: 48512 + 7 + 24745 + 71030 + 480 + 30 + 1570 + 210, steal: 210, running: 3}, ""},
		// Kernels before 2.6.11 end the line after iowait: no steal.
		{"old kernel", "cpu 10 0 5 100 1\ncpu0 10 0 5 100 1\n", snapshot{cpus: 1, busy: 15, total: 116}, ""},
		{"no cpu line", "intr 1\n", snapshot{}, "no cpu line"},
		{"bad number", "cpu 10 x 5 100\n", snapshot{}, `cpu column 2 "x"`},
		{"too short", "cpu 10 5\n", snapshot{}, "fewer than 4 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseStat = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParsePidStat(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		ppid      int
		ticks     uint64
		wantError bool
	}{
		{"redis-server", "4242 (redis-server) S 4100 4242 4100 0 -1 4194560 300 0 0 0 17 9 0 0 20 0 5 0 1000 1 2 3", 4100, 26, false},
		{"command with spaces and parentheses", "77 (a (b) c) R 1 77 77 0 -1 0 0 0 0 0 120 30 0 0 20 0 1 0", 1, 150, false},
		{"no command", "77 a R 1", 0, 0, true},
		{"too few fields", "77 (x) R 1 2 3", 0, 0, true},
		{"bad ppid", "77 (x) R p 77 77 0 -1 0 0 0 0 0 1 1 0 0", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ppid, ticks, err := parsePidStat([]byte(tt.in))
			if (err != nil) != tt.wantError || ppid != tt.ppid || ticks != tt.ticks {
				t.Errorf("parsePidStat = %d, %d, %v; want %d, %d, error %v", ppid, ticks, err, tt.ppid, tt.ticks, tt.wantError)
			}
		})
	}
}

// TestOwnTree: the run's processes are the roots that exist and all their
// descendants, nothing else.
func TestOwnTree(t *testing.T) {
	procs := map[int]proc{
		1: {0, 5}, 10: {1, 100}, 11: {10, 7}, 12: {11, 3}, 20: {1, 50}, 30: {20, 9}, 40: {1, 1},
	}
	got := ownTree(procs, []int{10, 30, 99, 0})
	want := map[int]uint64{10: 100, 11: 7, 12: 3, 30: 9}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ownTree = %v, want %v", got, want)
	}
}

// TestAccumulator: per period, other processes' CPU is the machine's busy
// time less the growth of the run's own processes (a new one counts from
// 0), in cores; steal a share of all cores' time.
func TestAccumulator(t *testing.T) {
	prev := snapshot{cpus: 2, busy: 1000, total: 5000, steal: 100, running: 2, own: map[int]uint64{10: 300, 11: 50, 12: 20}}
	// 200 ticks of both cores pass: 120 busy, 40 of them the run's own
	// (10: +30, 11: +5, new 13: 5; 12 is gone), 10 stolen.
	cur := snapshot{cpus: 2, busy: 1120, total: 5200, steal: 110, running: 6, own: map[int]uint64{10: 330, 11: 55, 13: 5}}
	var a cpuAccumulator
	a.add(prev, cur)
	a.add(cur, cur) // no time passed: ignored
	var s Summary
	a.summarize(&s)
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	if s.Samples != 1 || !near(s.OtherCPUCores.Mean, 80.0/200*2) || !near(s.StealShare.Mean, 10.0/200) || s.RunQueue.Mean != 6 {
		t.Errorf("summary %+v, want 1 sample, other 0.8 cores, steal 5%%, run queue 6", s)
	}
	// The run using more than the machine counted (tick rounding) is 0 other.
	var b cpuAccumulator
	b.add(snapshot{cpus: 2, busy: 0, total: 100, own: map[int]uint64{1: 0}}, snapshot{cpus: 2, busy: 10, total: 200, own: map[int]uint64{1: 12}})
	if b.otherSum != 0 {
		t.Errorf("other = %v, want 0", b.otherSum)
	}
}

// TestJudge: busy above either threshold, with the numbers; nothing
// measured is not busy.
func TestJudge(t *testing.T) {
	tests := []struct {
		name  string
		s     Summary
		busy  bool
		words []string
	}{
		{"quiet", Summary{Samples: 10, OtherCPUCores: Stat{0.1, 0.4}, StealShare: Stat{0.01, 0.02}}, false, nil},
		{"at the thresholds", Summary{Samples: 10, OtherCPUCores: Stat{BusyOtherCores, 1}, StealShare: Stat{BusySteal, 0.1}}, false, nil},
		{"other processes", Summary{Samples: 10, OtherCPUCores: Stat{0.61, 1.4}}, true, []string{"other processes used 0.61 cores on average (max 1.40; threshold 0.25)"}},
		{"steal", Summary{Samples: 10, StealShare: Stat{0.08, 0.2}}, true, []string{"steal took 8.0% of the CPU time on average (max 20.0%; threshold 5%)"}},
		{"both", Summary{Samples: 10, OtherCPUCores: Stat{1, 2}, StealShare: Stat{0.5, 0.5}}, true, []string{"other processes", "; steal took"}},
		{"not measured", Summary{OtherCPUCores: Stat{1, 2}}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			s.judge()
			if s.Busy != tt.busy || (!tt.busy && s.Why != "") {
				t.Errorf("busy %v why %q, want busy %v", s.Busy, s.Why, tt.busy)
			}
			for _, w := range tt.words {
				if !strings.Contains(s.Why, w) {
					t.Errorf("why %q lacks %q", s.Why, w)
				}
			}
		})
	}
}

// writeProc lays out a proc file system with a /proc/stat and the given
// processes (pid → ppid, utime, stime).
func writeProc(t *testing.T, dir string, stat string, procs map[int][3]int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	for pid, p := range procs {
		d := filepath.Join(dir, strconv.Itoa(pid))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		line := strconv.Itoa(pid) + " (p) S " + strconv.Itoa(p[0]) + " 0 0 0 -1 0 0 0 0 0 " + strconv.Itoa(p[1]) + " " + strconv.Itoa(p[2]) + " 0 0 20 0 1 0\n"
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReaderRescans: a reader finds this process's tree by a full scan,
// reads only that tree until the next scan, and a process started in
// between joins at the next scan.
func TestReaderRescans(t *testing.T) {
	dir := t.TempDir()
	self := os.Getpid()
	writeProc(t, dir, procStat, map[int][3]int{self: {1, 10, 5}, 900001: {self, 3, 1}, 900002: {1, 50, 50}})
	r := newReader(dir, nil)
	s, err := r.read()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]uint64{self: 15, 900001: 4}; !reflect.DeepEqual(s.own, want) {
		t.Fatalf("first reading: own %v, want %v", s.own, want)
	}
	writeProc(t, dir, procStat, map[int][3]int{900003: {self, 1, 1}})
	s, _ = r.read()
	if _, ok := s.own[900003]; ok {
		t.Errorf("a process started between scans is read before the next scan: %v", s.own)
	}
	for range rescanEvery - 2 {
		r.read()
	}
	s, _ = r.read()
	if _, ok := s.own[900003]; !ok || len(s.own) != 3 {
		t.Errorf("after a rescan: own %v, want this process, 900001 and 900003", s.own)
	}
	if _, err := newReader(filepath.Join(dir, "none"), nil).read(); err == nil {
		t.Error("no proc file system: no error")
	}
}

func TestHostStatic(t *testing.T) {
	proc, cg := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proc, "cpuinfo"), []byte("processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemTotal:       24683548 kB\nMemFree: 1 kB\n"), 0o644)
	os.WriteFile(filepath.Join(cg, "cpu.max"), []byte("150000 100000\n"), 0o644)
	if got, want := HostStatic(proc, cg), (Static{Hypervisor: true, MemoryMB: 24105, CPUQuotaCores: 1.5}); got != want {
		t.Errorf("HostStatic = %+v, want %+v", got, want)
	}
	tests := []struct {
		name  string
		files map[string]string
		want  float64
	}{
		{"v2 no limit", map[string]string{"cpu.max": "max 100000\n"}, 0},
		{"v2 two cores", map[string]string{"cpu.max": "200000 100000\n"}, 2},
		{"v1 no limit", map[string]string{"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0},
		{"v1 half a core", map[string]string{"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
				os.WriteFile(filepath.Join(root, name), []byte(content), 0o644)
			}
			if got := cpuQuota(root); got != tt.want {
				t.Errorf("cpuQuota = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSamplerOnRedis samples a real redis-server: round trips before the
// run on one connection, one PING per period during it, and CPU figures
// from this machine's /proc. A closed port counts failed PINGs.
func TestSamplerOnRedis(t *testing.T) {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	s := Start(ctx, Options{Servers: []string{c.Addrs()[0], closed}, Pings: 20, Every: 20 * time.Millisecond, PIDs: []int{c.Nodes()[0].PID()}})
	for deadline := time.Now().Add(10 * time.Second); s.periods() < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	sum := s.Stop()
	if again := s.Stop(); !reflect.DeepEqual(again, sum) {
		t.Error("a second Stop returned another summary")
	}
	b := sum.RTTBefore
	if len(b) != 2 || b[0].N != 20 || b[0].Failed != 0 || b[0].P50Ms <= 0 || b[0].P99Ms < b[0].P50Ms || b[1].N != 0 || b[1].Failed != 20 {
		t.Errorf("round trips before: %+v", b)
	}
	d := sum.RTTDuring
	if len(d) != 2 || d[0].N < 2 || d[1].N != 0 || d[1].Failed < 2 {
		t.Errorf("round trips during: %+v", d)
	}
	if sum.Error != "" || sum.Samples < 2 || sum.EveryMs != 20 || sum.RunQueue.Max < 1 || sum.OtherCPUCores.Mean < 0 {
		t.Errorf("CPU figures: %+v", sum)
	}
	if got := MaxP99Ms(sum.RTTBefore); got != b[0].P99Ms {
		t.Errorf("MaxP99Ms = %v, want %v (the closed port has no round trip)", got, b[0].P99Ms)
	}
}

// periods returns how many periods the sampler has sampled so far.
func (s *Sampler) periods() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ticks
}

// TestReaderSeesNewChildren: a process the run starts after the sampler
// (an adapter, a restarted server) is the run's own from the next
// reading, not another process's CPU until a rescan: an adapter whose
// retries burn CPU must not mark its own run busy.
func TestReaderSeesNewChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	r := newReader("/proc", nil)
	if _, err := r.read(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	s, err := r.read() // the second reading: no full rescan (rescanEvery)
	if err != nil {
		t.Fatal(err)
	}
	if r.noChildren {
		t.Skip("the kernel does not list children (CONFIG_PROC_CHILDREN)")
	}
	if _, ok := s.own[cmd.Process.Pid]; !ok {
		t.Errorf("a child started after the first reading is not among the run's own processes at the next one (own: %d processes)", len(s.own))
	}
}
