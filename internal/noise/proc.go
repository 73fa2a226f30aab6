package noise

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// snapshot is one reading of /proc: the machine's CPU times and the CPU
// time of each process of the run's own tree, all in clock ticks.
type snapshot struct {
	// cpus is the number of cpuN lines in /proc/stat.
	cpus int
	// busy is user+nice+system, total every column but guest (already
	// in user), steal the steal column: all cores, in ticks.
	busy, total, steal uint64
	// running is procs_running.
	running int
	// own maps each process of the run's tree to its utime+stime, in ticks.
	own map[int]uint64
}

// rescanEvery is how many readings apart a reader scans every process
// of /proc for the run's tree; in between it reads only the processes
// the last scan found (a scan of ~100 processes costs ~3 ms of CPU, a
// read of the tree ~0.2 ms). A process that starts between two scans
// (a restarted server) counts as another process's CPU until the next
// scan, which then counts all its CPU time as the run's: over a run the
// two cancel out.
const rescanEvery = 10

// reader reads snapshots from a proc file system.
type reader struct {
	proc  string
	self  int
	extra []int
	// reads counts readings; tree is the run's processes the last scan found.
	reads int
	tree  []int
	// noChildren is set once the kernel is found not to list children
	// (walk): the reader then scans every rescanEvery readings.
	noChildren bool
}

func newReader(proc string, extra []int) *reader {
	return &reader{proc: proc, self: os.Getpid(), extra: extra}
}

// read takes one snapshot: /proc/stat, then /proc/PID/stat of the run's
// processes (this process, Options.PIDs and their descendants; all
// processes are scanned to find them every rescanEvery readings).
func (r *reader) read() (snapshot, error) {
	data, err := os.ReadFile(filepath.Join(r.proc, "stat"))
	if err != nil {
		return snapshot{}, fmt.Errorf("noise: %w", err)
	}
	s, err := parseStat(data)
	if err != nil {
		return snapshot{}, err
	}
	if own, ok := r.walk(append([]int{r.self}, r.extra...)); ok {
		// The kernel lists each task's children: the run's tree is read
		// afresh at every reading, so a process started since the last
		// one (an adapter, a restarted server) counts as the run's from
		// its first tick.
		s.own = own
	} else if r.reads%rescanEvery == 0 {
		procs, err := r.processes()
		if err != nil {
			return snapshot{}, err
		}
		s.own = ownTree(procs, append([]int{r.self}, r.extra...))
		r.tree = r.tree[:0]
		for pid := range s.own {
			r.tree = append(r.tree, pid)
		}
	} else {
		s.own = make(map[int]uint64, len(r.tree))
		for _, pid := range r.tree {
			if p, ok := r.process(pid); ok {
				s.own[pid] = p.ticks
			}
		}
	}
	r.reads++
	return s, nil
}

// walk returns the CPU ticks of the roots that exist and all their
// descendants, found through /proc/PID/task/TID/children (Linux 3.5+,
// CONFIG_PROC_CHILDREN); false when the kernel does not list children,
// and the caller scans every process instead.
func (r *reader) walk(roots []int) (map[int]uint64, bool) {
	if r.noChildren {
		return nil, false
	}
	own := map[int]uint64{}
	stack := append([]int(nil), roots...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, seen := own[pid]; seen {
			continue
		}
		p, ok := r.process(pid)
		if !ok {
			continue
		}
		own[pid] = p.ticks
		kids, ok := r.children(pid)
		if !ok {
			if pid == r.self {
				r.noChildren = true // this kernel does not list them
				return nil, false
			}
			continue // the process ended meanwhile
		}
		stack = append(stack, kids...)
	}
	return own, true
}

// children lists the child processes of pid from the children file of
// each of its tasks (a child is listed under the thread that forked it);
// false when pid's tasks cannot be read or list no children file.
func (r *reader) children(pid int) ([]int, bool) {
	dir := filepath.Join(r.proc, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && t.Name() == strconv.Itoa(pid) {
				return nil, false
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, true
}

// process reads /proc/PID/stat; false when the process is gone.
func (r *reader) process(pid int) (proc, bool) {
	data, err := os.ReadFile(filepath.Join(r.proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, false
	}
	ppid, ticks, err := parsePidStat(data)
	if err != nil {
		return proc{}, false
	}
	return proc{ppid, ticks}, true
}

// proc is one process of /proc: its parent and CPU time (utime+stime, ticks).
type proc struct {
	ppid  int
	ticks uint64
}

// processes reads /proc/PID/stat of every process. A process that ends
// while it is read is skipped.
func (r *reader) processes() (map[int]proc, error) {
	ents, err := os.ReadDir(r.proc)
	if err != nil {
		return nil, fmt.Errorf("noise: %w", err)
	}
	out := make(map[int]proc, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := r.process(pid); ok {
			out[pid] = p
		}
	}
	return out, nil
}

// ownTree returns the CPU ticks of the roots that exist and of all their
// descendants.
func ownTree(procs map[int]proc, roots []int) map[int]uint64 {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	own := map[int]uint64{}
	stack := append([]int(nil), roots...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p, ok := procs[pid]
		if _, seen := own[pid]; !ok || seen {
			continue
		}
		own[pid] = p.ticks
		stack = append(stack, children[pid]...)
	}
	return own
}

// parseStat reads the "cpu" totals, the number of cpuN lines and
// procs_running from /proc/stat (proc(5)).
func parseStat(data []byte) (snapshot, error) {
	var s snapshot
	found := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "cpu":
			// user nice system idle iowait irq softirq steal guest guest_nice
			var v [10]uint64
			for i := 1; i < len(f) && i <= len(v); i++ {
				x, err := strconv.ParseUint(f[i], 10, 64)
				if err != nil {
					return snapshot{}, fmt.Errorf("noise: /proc/stat: cpu column %d %q: %w", i, f[i], err)
				}
				v[i-1] = x
			}
			if len(f) < 5 {
				return snapshot{}, errors.New("noise: /proc/stat: cpu line has fewer than 4 columns")
			}
			s.busy = v[0] + v[1] + v[2]
			for _, x := range v[:8] {
				s.total += x
			}
			s.steal = v[7]
			found = true
		case strings.HasPrefix(f[0], "cpu"):
			s.cpus++
		case f[0] == "procs_running" && len(f) > 1:
			s.running, _ = strconv.Atoi(f[1])
		}
	}
	if !found {
		return snapshot{}, errors.New("noise: /proc/stat has no cpu line")
	}
	return s, nil
}

// parsePidStat reads the parent PID (field 4) and utime+stime (fields 14
// and 15, ticks) of a /proc/PID/stat line; the command (field 2) is in
// parentheses and may hold spaces and parentheses itself.
func parsePidStat(data []byte) (ppid int, ticks uint64, err error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("noise: /proc/PID/stat without a command in parentheses")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state): field k is f[k-3].
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("noise: /proc/PID/stat has %d fields after the command, want at least 13", len(f))
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, fmt.Errorf("noise: /proc/PID/stat ppid %q: %w", f[1], err)
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("noise: /proc/PID/stat utime, stime: %w", err)
	}
	return ppid, u + s, nil
}

// cpuAccumulator sums the CPU figures of consecutive snapshot pairs.
type cpuAccumulator struct {
	n                  int
	otherSum, otherMax float64
	stealSum, stealMax float64
	runSum, runMax     float64
	err                error
}

// add accounts the period between two snapshots. The run's own CPU in it
// is the growth of each own process's ticks (a process new in cur counts
// from 0: it started during the period); a process gone in cur loses its
// last partial period, which then counts as other processes' CPU.
func (a *cpuAccumulator) add(prev, cur snapshot) {
	total := float64(cur.total - prev.total)
	if cur.total <= prev.total || cur.busy < prev.busy || cur.steal < prev.steal || cur.cpus == 0 {
		return
	}
	var own uint64
	for pid, t := range cur.own {
		if p, ok := prev.own[pid]; ok && t >= p {
			own += t - p
		} else if !ok {
			own += t
		}
	}
	busy := float64(cur.busy - prev.busy)
	other := max(busy-float64(own), 0)
	cores := float64(cur.cpus)
	a.n++
	o := other / total * cores
	st := float64(cur.steal-prev.steal) / total
	a.otherSum += o
	a.otherMax = max(a.otherMax, o)
	a.stealSum += st
	a.stealMax = max(a.stealMax, st)
	a.runSum += float64(cur.running)
	a.runMax = max(a.runMax, float64(cur.running))
}

// summarize writes the means and maxima into s.
func (a *cpuAccumulator) summarize(s *Summary) {
	s.Samples = a.n
	if a.err != nil {
		s.Error = a.err.Error()
	}
	if a.n == 0 {
		return
	}
	n := float64(a.n)
	s.OtherCPUCores = Stat{Mean: a.otherSum / n, Max: a.otherMax}
	s.StealShare = Stat{Mean: a.stealSum / n, Max: a.stealMax}
	s.RunQueue = Stat{Mean: a.runSum / n, Max: a.runMax}
}
