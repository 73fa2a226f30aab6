// Package perf measures lockbench's own cost against the standard tool on
// the same redis-server in the same run (`lockbench perf`, `make perf`):
//
//   - redis-benchmark (Debian's redis-tools) sends `SET key value NX PX 30000`
//     on random keys (-r, __rand_int__) from C clients (-c) with one request
//     in flight each; its rate is requests/s as it reports them.
//   - lockbench's set-nx-px strategy runs the same number of closed-loop
//     clients, each on a key of its own (no contention, no retries) with no
//     critical-section wait, for as long as redis-benchmark ran; its command
//     rate is the Redis commands the server actually served (SET and DEL,
//     from INFO commandstats deltas) per second. Both rates count one Redis
//     command per round trip, so their ratio is the harness's efficiency.
//   - the same lockbench run again without recording the history gives the
//     recording's cost.
//   - a bare go-redis loop (the same client options, SET NX PX then DEL on a
//     key per client, no context deadline, no history, no workload) gives
//     the ceiling of the client library and Go's runtime on this machine, so
//     the gap to redis-benchmark splits into what go-redis and Go cost
//     (go-redis loop / redis-benchmark) and what lockbench adds on top
//     (lockbench / go-redis loop).
//
// Each figure is the median of Options.Repeat rounds (each round runs the
// three measurements back to back), with min–max beside it. The optional
// sweep runs set-nx-px from 1 to 1024 clients on one key and on a key per
// client, with the server's CPU (INFO cpu: used_cpu_sys+used_cpu_user
// deltas per wall second, in cores) beside lockbench's own (getrusage), so
// the report shows where Redis, not the harness, is the limit.
package perf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/commandstats"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Strategy is the strategy perf measures: one SET NX PX to acquire, one DEL
// to release, the same command redis-benchmark sends.
const Strategy = "set-nx-px"

// TTL is the lock TTL of every perf run (PX 30000, as redis-benchmark's command).
const TTL = 30 * time.Second

// Options configures Run. Zero values select the defaults given.
type Options struct {
	// Clients are the client counts compared with redis-benchmark. Default {50, 1}.
	Clients []int
	// Requests is redis-benchmark's -n for each client count. Default (0):
	// 2000 per client, at least 20 000 and at most 200 000.
	Requests int
	// Repeat is the number of rounds per client count; figures are medians
	// with their 95% interval, which needs 6 rounds or more. Default 6.
	Repeat int
	// Sweep adds the throughput-vs-clients sweep.
	Sweep bool
	// SweepClients are the sweep's client counts. Default 1, 2, 4, ..., 1024.
	SweepClients []int
	// SweepDuration is the length of each sweep point. Default 1 s.
	SweepDuration time.Duration
	// Check runs the checker on the recorded histories of the comparison
	// (exclusion must hold: clients never share a key), timing it.
	Check bool
	// OutDir receives the recorded histories (histories/perf-*.jsonl).
	// Required.
	OutDir string
	// RedisBenchmark is the redis-benchmark binary. Default: looked up on PATH.
	RedisBenchmark string
	// ConnCheck keeps go-redis's connection health check, a recvfrom(MSG_PEEK)
	// system call on every pool Get, i.e. before every command, as bench's
	// runs do. Default false: perf's clients dial through a connection that
	// hides its file descriptor from go-redis, which then skips the check
	// (v9.23 has no option for it). The check only finds connections a
	// server closed (a fault) before they are reused; perf injects no
	// faults. In a chaos run it turns such a command into a definite
	// not-sent failure instead of an unknown outcome, so bench keeps it.
	ConnCheck bool
	// Seed seeds the workload. Default 1.
	Seed int64
	// CheckerOps is the size of the generated history `lockbench check` is
	// timed on (Ratios.Checker). Default (0): DefaultCheckerOps; negative:
	// the checker is not measured.
	CheckerOps int
	// CheckerRounds is how many times it is checked. Default 6.
	CheckerRounds int
	// Logf receives progress lines; nil: silent.
	Logf func(format string, args ...any)
}

// Measure is one measurement of one tool.
type Measure struct {
	// Tool is "redis-benchmark", "lockbench", "lockbench-unrecorded" or
	// "go-redis-loop".
	Tool string
	// Clients is the number of concurrent clients.
	Clients int
	// Keys is the number of lock keys (lockbench; 0 for redis-benchmark).
	Keys int
	// CommandsPerS is the command rate: for redis-benchmark its reported
	// requests/s; for lockbench the Redis commands the server served (INFO
	// commandstats delta) per second of the run.
	CommandsPerS float64
	// ServerCommandsPerS is the server's own count (INFO commandstats delta)
	// per wall second, for either tool.
	ServerCommandsPerS float64
	// GrantsPerS is lockbench's successful acquires per second (0 for redis-benchmark).
	GrantsPerS float64
	// Grants and Commands are the totals behind the rates.
	Grants   int
	Commands int64
	// Elapsed is the measured time.
	Elapsed time.Duration
	// ServerCPU is redis-server's CPU busy in cores (INFO cpu delta / wall time).
	ServerCPU float64
	// ClientCPU is the load generator's CPU busy in cores: lockbench's own
	// (getrusage RUSAGE_SELF) or redis-benchmark's (its rusage as a child).
	ClientCPU float64
	// ClientCPUS is the same in CPU seconds over the measurement (0 in
	// files of earlier lockbench versions).
	ClientCPUS float64
	// OtherCPU is what the rest of the machine used meanwhile, in cores
	// (/proc/stat busy time minus ServerCPU and ClientCPU): other
	// processes competing for the same cores make every figure noisier.
	OtherCPU float64
	// History is the recorded history file (lockbench with recording), relative to OutDir.
	History string
	// Check is the exclusion verdict on the history ("" when not checked),
	// CheckS how long Holds+Exclusion+Resource took, Ops how many operations.
	Check  string
	CheckS float64
	Ops    int

	exclusion, resource checker.Status // the statuses behind Check
}

// Stat is a median with its spread over rounds.
type Stat struct {
	Median, Min, Max float64
}

// Comparison is one client count: every round's measures and the medians.
type Comparison struct {
	Clients int
	// Rounds holds, per round, redis-benchmark, lockbench,
	// lockbench-unrecorded and the go-redis loop, in that order.
	Rounds [][4]Measure
	// RedisBenchmark, Lockbench, Unrecorded and GoRedis are command rates
	// (commands/s).
	RedisBenchmark, Lockbench, Unrecorded, GoRedis Stat
	// Ratio is lockbench's command rate over redis-benchmark's, per round.
	Ratio Stat
	// LibraryRatio is the go-redis loop's command rate over
	// redis-benchmark's, per round: the most any go-redis harness reaches
	// here. HarnessRatio is lockbench's over the go-redis loop's: what
	// lockbench's own code (workload, strategy, context deadlines) costs.
	LibraryRatio, HarnessRatio Stat
	// RecordingCost is 1 - recorded/unrecorded command rate, per round.
	RecordingCost Stat
	// ClientUs are the load generators' CPU time per command in µs
	// (ClientCPU / CommandsPerS): redis-benchmark, lockbench recorded and
	// unrecorded, the go-redis loop. Unlike rates they hardly move when
	// other processes take CPU, so they compare the tools on a busy machine.
	ClientUs [4]Stat
}

// CPUPerCmd is m's client CPU seconds per command the server served
// (ClientCPUS / Commands; ClientUsPerCmd where ClientCPUS is not
// recorded); 0 without commands.
func (m Measure) CPUPerCmd() float64 {
	if m.ClientCPUS > 0 && m.Commands > 0 {
		return m.ClientCPUS / float64(m.Commands)
	}
	return m.ClientUsPerCmd() / 1e6
}

// ClientUsPerCmd is m's client CPU time per command, in µs (0 without commands).
func (m Measure) ClientUsPerCmd() float64 {
	if m.CommandsPerS <= 0 {
		return 0
	}
	return m.ClientCPU / m.CommandsPerS * 1e6
}

// SweepPoint is one sweep measurement.
type SweepPoint struct {
	// Keys is "one" (every client on one key) or "own" (a key per client).
	Keys string
	Measure
	// Limit says what bounds the rate: "server", "machine CPU" or "round trips".
	Limit string
}

// Report is the outcome of Run.
type Report struct {
	// Redis is the redis-server version.
	Redis string
	// RedisBenchmarkCmd is the redis-benchmark command line of the first comparison.
	RedisBenchmarkCmd string
	// ConnCheck is Options.ConnCheck: whether lockbench's clients ran go-redis's health check.
	ConnCheck   bool
	Comparisons []Comparison
	Sweep       []SweepPoint
	// Ratios are the three figures against their targets.
	Ratios Ratios
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Clients) == 0 {
		o.Clients = []int{50, 1}
	}
	for _, c := range append(slices.Clone(o.Clients), o.SweepClients...) {
		if c < 1 || c > 10000 {
			return o, fmt.Errorf("%w: %d clients (--clients): want 1..10000", ErrOptions, c)
		}
	}
	if o.Repeat == 0 {
		o.Repeat = 6
	}
	if o.CheckerOps == 0 {
		o.CheckerOps = DefaultCheckerOps
	}
	if o.CheckerRounds == 0 {
		o.CheckerRounds = 6
	}
	switch {
	case o.Repeat < 0:
		return o, fmt.Errorf("%w: repeat (--repeat) %d: want at least 1", ErrOptions, o.Repeat)
	case o.Requests < 0:
		return o, fmt.Errorf("%w: requests (--requests) %d: want 0 (the default) or more", ErrOptions, o.Requests)
	case o.CheckerRounds < 0:
		return o, fmt.Errorf("%w: checker rounds (--checker-rounds) %d: want at least 1", ErrOptions, o.CheckerRounds)
	case o.SweepDuration < 0:
		return o, fmt.Errorf("%w: sweep duration (--sweep-duration) %v: want a positive duration (0: the default, 1s)", ErrOptions, o.SweepDuration)
	}
	if len(o.SweepClients) == 0 {
		for c := 1; c <= 1024; c *= 2 {
			o.SweepClients = append(o.SweepClients, c)
		}
	}
	if o.SweepDuration == 0 {
		o.SweepDuration = time.Second
	}
	if o.OutDir == "" {
		return o, fmt.Errorf("%w: no output folder (OutDir)", ErrOptions)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return o, fmt.Errorf("%w: perf: redis-server not found on PATH; install it: apt-get install redis-server (or run make perf, which installs it)", cluster.ErrEnvironment)
	}
	if o.RedisBenchmark == "" {
		p, err := exec.LookPath("redis-benchmark")
		if err != nil {
			return o, fmt.Errorf("%w: perf: redis-benchmark not found on PATH; install it: apt-get install redis-tools (or run make perf, which installs it)", cluster.ErrEnvironment)
		}
		o.RedisBenchmark = p
	}
	return o, nil
}

// ErrOptions is wrapped by the errors of Validate (and Run) for options out
// of range; the CLI maps it to a usage error (exit 2).
var ErrOptions = errors.New("perf: invalid option")

// Validate checks o as Run does before starting anything: options out of
// range give an error wrapping ErrOptions; a redis-server or
// redis-benchmark missing from PATH one wrapping cluster.ErrEnvironment.
// Callers that remove files before Run (an earlier run in OutDir) call it
// first, so that bad input or a missing binary leaves them in place.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// requests returns redis-benchmark's -n for c clients.
func (o Options) requests(c int) int {
	if o.Requests > 0 {
		return o.Requests
	}
	return min(max(2000*c, 20000), 200000)
}

// Run starts one redis-server, runs the comparisons (and the sweep) on it
// and stops it. Errors: cluster.ErrEnvironment-wrapped ones for a missing
// redis-server or redis-benchmark, a failed redis-benchmark, ctx's error on
// Ctrl-C. A Report with what was measured so far is returned beside an error.
func Run(ctx context.Context, o Options) (Report, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Report{}, err
	}
	if err := os.MkdirAll(filepath.Join(o.OutDir, "histories"), 0o755); err != nil {
		return Report{}, fmt.Errorf("perf: results folder: %w", err)
	}
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		return Report{}, err
	}
	defer c.Stop()
	node := c.Nodes()[0]
	ctrl := redis.NewClient(&redis.Options{Addr: node.Addr(), PoolSize: 1, MaxRetries: -1})
	defer ctrl.Close()
	r := Report{Redis: c.RedisVersion(), ConnCheck: o.ConnCheck}
	m := &meter{o: o, addr: node.Addr(), port: node.Port(), ctrl: ctrl}

	for _, n := range o.Clients {
		cmp := Comparison{Clients: n}
		for round := 0; round < o.Repeat; round++ {
			o.Logf("perf: %d clients, round %d/%d", n, round+1, o.Repeat)
			if err := ctrl.FlushAll(ctx).Err(); err != nil {
				return r, fmt.Errorf("perf: FLUSHALL: %w", err)
			}
			rb, cmd, err := m.redisBenchmark(ctx, n, o.requests(n))
			if err != nil {
				return r, err
			}
			if r.RedisBenchmarkCmd == "" {
				r.RedisBenchmarkCmd = cmd
			}
			d := min(max(rb.Elapsed, time.Second), 10*time.Second)
			name := fmt.Sprintf("perf-c%d-r%d", n, round+1)
			// Recorded and unrecorded alternate which goes first, so that
			// a drift in the machine's load does not favour one.
			var rec, unrec, loop Measure
			if loop, err = m.goRedisLoop(ctx, n, d); err != nil {
				return r, err
			}
			for i := range 2 {
				w := workload.Config{Clients: n, OwnKeys: true, Duration: d}
				if (i+round)%2 == 0 {
					rec, err = m.lockbench(ctx, w, name)
				} else {
					unrec, err = m.lockbench(ctx, w, "")
				}
				if err != nil {
					return r, err
				}
			}
			cmp.Rounds = append(cmp.Rounds, [4]Measure{rb, rec, unrec, loop})
		}
		cmp.summarise()
		r.Comparisons = append(r.Comparisons, cmp)
	}
	r.clientRatios()
	if o.CheckerOps > 0 {
		cm, err := measureChecker(ctx, o.CheckerOps, o.CheckerRounds, o.Logf)
		r.Ratios.Checker = cm
		if err != nil {
			return r, err
		}
	}
	if o.Check {
		for i := range r.Comparisons {
			for j := range r.Comparisons[i].Rounds {
				if err := checkHistory(o.OutDir, &r.Comparisons[i].Rounds[j][1]); err != nil {
					return r, err
				}
			}
		}
	}
	if !o.Sweep {
		return r, nil
	}
	tmp, err := os.MkdirTemp("", "lockbench-perf-sweep-")
	if err != nil {
		return r, fmt.Errorf("perf: %w", err)
	}
	defer os.RemoveAll(tmp)
	sm := *m
	sm.o.OutDir = tmp // sweep histories are recorded (as in a real run) but not kept
	if err := os.MkdirAll(filepath.Join(tmp, "histories"), 0o755); err != nil {
		return r, fmt.Errorf("perf: %w", err)
	}
	for _, keys := range []string{"one", "own"} {
		for _, n := range o.SweepClients {
			o.Logf("perf: sweep %d clients, %s key(s)", n, keys)
			if err := ctrl.FlushAll(ctx).Err(); err != nil {
				return r, fmt.Errorf("perf: FLUSHALL: %w", err)
			}
			// A 5 s operation timeout: with hundreds of clients on a busy
			// machine, the default 500 ms makes calls time out, and each
			// timeout closes its connection and dials again, which loads
			// the server further (a collapse seen at 1024 clients).
			w := workload.Config{Clients: n, Keys: 1, Duration: o.SweepDuration, Retry: workload.Retry{Kind: "spin"}, OpTimeout: 5 * time.Second}
			if keys == "own" {
				w.OwnKeys = true
			}
			name := fmt.Sprintf("sweep-%s-c%d", keys, n)
			ms, err := sm.lockbench(ctx, w, name)
			if err != nil {
				return r, err
			}
			os.Remove(filepath.Join(tmp, ms.History))
			ms.History = ""
			r.Sweep = append(r.Sweep, SweepPoint{Keys: keys, Measure: ms, Limit: limit(ms)})
		}
	}
	return r, nil
}

// limit names what bounds a measurement: the server when redis-server (one
// thread) is busy ≥ 90% of a core; the machine when everything running
// (server, client and other processes) uses ≥ 90% of every core, "shared"
// when other processes took ≥ 0.5 core of it; else round trips (client and
// server wait on each other: latency-bound).
func limit(m Measure) string {
	cores := float64(runtime.NumCPU())
	switch {
	case m.ServerCPU >= 0.9:
		return "server"
	case m.ServerCPU+m.ClientCPU+m.OtherCPU >= 0.9*cores && m.OtherCPU >= 0.5:
		return fmt.Sprintf("machine CPU, shared (others %.1f cores)", m.OtherCPU)
	case m.ServerCPU+m.ClientCPU+m.OtherCPU >= 0.9*cores:
		return "machine CPU"
	default:
		return "round trips"
	}
}

// meter runs measurements against one server.
type meter struct {
	o    Options
	addr string
	port int
	ctrl *redis.Client
}

// rpsLine matches redis-benchmark -q's final line for a test.
var rpsLine = regexp.MustCompile(`: ([0-9.]+) requests per second`)

// redisBenchmark runs redis-benchmark with n clients and req requests of
// SET key value NX PX 30000 on random keys; it returns the measure and the
// command line.
func (m *meter) redisBenchmark(ctx context.Context, n, req int) (Measure, string, error) {
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(m.port), "-c", strconv.Itoa(n), "-n", strconv.Itoa(req), "-q",
		"-r", "1000000", "SET", "lb:rb:__rand_int__", "value", "NX", "PX", "30000"}
	line := fmt.Sprintf("redis-benchmark -h 127.0.0.1 -p PORT -c %d -n %d -q -r 1000000 SET lb:rb:__rand_int__ value NX PX 30000", n, req)
	before, err := snapshot(ctx, m.ctrl)
	if err != nil {
		return Measure{}, line, err
	}
	cmd := exec.CommandContext(ctx, m.o.RedisBenchmark, args...)
	busy0 := machineBusy()
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(t0)
	if ctx.Err() != nil {
		return Measure{}, line, ctx.Err()
	}
	if err != nil {
		return Measure{}, line, fmt.Errorf("%w: perf: redis-benchmark: %v: %s", cluster.ErrEnvironment, err, lastLine(out))
	}
	after, err := snapshot(ctx, m.ctrl)
	if err != nil {
		return Measure{}, line, err
	}
	match := rpsLine.FindAllSubmatch(out, -1)
	if len(match) == 0 {
		return Measure{}, line, fmt.Errorf("%w: perf: redis-benchmark printed no \"requests per second\": %s", cluster.ErrEnvironment, lastLine(out))
	}
	rps, err := strconv.ParseFloat(string(match[len(match)-1][1]), 64)
	if err != nil {
		return Measure{}, line, fmt.Errorf("perf: redis-benchmark rate: %w", err)
	}
	cmds, cores := serverDelta(before, after)
	ms := Measure{Tool: "redis-benchmark", Clients: n, CommandsPerS: rps, Commands: cmds, Elapsed: elapsed,
		ServerCommandsPerS: float64(cmds) / after.At.Sub(before.At).Seconds(), ServerCPU: cores}
	if ps := cmd.ProcessState; ps != nil {
		ms.ClientCPUS = (ps.UserTime() + ps.SystemTime()).Seconds()
		ms.ClientCPU = ms.ClientCPUS / elapsed.Seconds()
	}
	ms.OtherCPU = max(0, (machineBusy()-busy0).Seconds()/elapsed.Seconds()-ms.ServerCPU-ms.ClientCPU)
	return ms, line, nil
}

func lastLine(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	return s
}

// lockbench runs set-nx-px with w (TTL, CS and seed set here) and measures
// it. history names the recorded history (OutDir/histories/NAME.jsonl); ""
// runs unrecorded.
func (m *meter) lockbench(ctx context.Context, w workload.Config, name string) (Measure, error) {
	st, err := strategies.Lookup(Strategy)
	if err != nil {
		return Measure{}, err
	}
	w.TTL = TTL
	w.CS = workload.CSDist{Kind: "fixed"} // no critical-section wait
	w.Seed = m.o.Seed
	full, err := w.WithDefaults()
	if err != nil {
		return Measure{}, err
	}
	clock := history.NewClock()
	tool := "lockbench-unrecorded"
	var hw *history.Writer
	rel := ""
	if name != "" {
		tool = "lockbench"
		rel = filepath.Join("histories", name+".jsonl")
		hw, err = history.Create(filepath.Join(m.o.OutDir, rel), history.Header{
			Strategy: Strategy, Scenario: "perf", Seed: m.o.Seed, Clients: full.Clients, Keys: full.Keys,
			TTLMs: TTL.Milliseconds(), Fencing: string(full.Fencing), Started: clock.Start().UTC().Format(time.RFC3339Nano),
		})
		if err != nil {
			return Measure{}, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
		}
		defer hw.Close()
	}
	// The same wiring as a bench run's (workload.NewEnv, workload.DialNodes,
	// workload.Dialer), minus the command counter and the faults.
	env := workload.NewEnv(st, hw, clock)
	dial := m.dialer(full.OpTimeout)
	env.Nodes = workload.DialNodes([]string{m.addr}, func(int) workload.Dialer { return dial })
	win, err := m.open(ctx)
	if err != nil {
		return Measure{}, err
	}
	// The CPU profile (--cpuprofile) tags the clients' goroutines with
	// the tool: go tool pprof -tagfocus 'tool=^lockbench$' shows one
	// measurement alone.
	var stats workload.Stats
	pprof.Do(ctx, pprof.Labels("tool", tool), func(ctx context.Context) { stats, err = workload.Run(ctx, w, env) })
	if err != nil {
		return Measure{}, err
	}
	elapsed := stats.Elapsed
	if hw != nil {
		// Writing out the queue is part of recording's cost.
		t := time.Now()
		if err := hw.Close(); err != nil {
			return Measure{}, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
		}
		elapsed += time.Since(t)
	}
	ms, err := m.close(ctx, win, elapsed)
	if err != nil {
		return Measure{}, err
	}
	ms.Tool, ms.Clients, ms.Keys, ms.History = tool, full.Clients, full.Keys, rel
	ms.Grants, ms.GrantsPerS = stats.Grants, float64(stats.Grants)/elapsed.Seconds()
	return ms, nil
}

// window is what a measurement starts from: the server's counters and the
// CPU times of this process and of the machine.
type window struct {
	before      commandstats.NodeCalls
	cpu0, busy0 time.Duration
}

// open collects garbage (the previous measurement's is not this one's
// cost) and starts a measurement window.
func (m *meter) open(ctx context.Context) (window, error) {
	runtime.GC()
	before, err := snapshot(ctx, m.ctrl)
	if err != nil {
		return window{}, err
	}
	return window{before: before, cpu0: selfCPU(), busy0: machineBusy()}, nil
}

// close ends the window of a run that took elapsed and returns its server
// commands, command rates and CPU figures (cores over the window's wall
// time); the caller fills in the tool, clients, keys and grants.
func (m *meter) close(ctx context.Context, w window, elapsed time.Duration) (Measure, error) {
	cpu, busy := selfCPU()-w.cpu0, machineBusy()-w.busy0
	after, err := snapshot(ctx, m.ctrl)
	if err != nil {
		return Measure{}, err
	}
	cmds, cores := serverDelta(w.before, after)
	wall := after.At.Sub(w.before.At).Seconds()
	return Measure{
		CommandsPerS: float64(cmds) / elapsed.Seconds(), ServerCommandsPerS: float64(cmds) / wall,
		Commands: cmds, Elapsed: elapsed, ServerCPU: cores, ClientCPU: cpu.Seconds() / wall, ClientCPUS: cpu.Seconds(),
		OtherCPU: max(0, busy.Seconds()/wall-cores-cpu.Seconds()/wall),
	}, nil
}

// clientOptions are the go-redis options of one perf client: one client
// per logical client, configured as bench's runs configure theirs
// (workload.Dialer, so perf measures what a run costs), except for the
// health check (see Options.ConnCheck). It has one command in flight, so
// its pool holds two connections at most. timeout bounds dials, reads and
// writes.
func (m *meter) clientOptions(timeout time.Duration) *redis.Options {
	return m.dialer(timeout).Options(m.addr)
}

// dialer is the workload.Dialer of clientOptions.
func (m *meter) dialer(timeout time.Duration) workload.Dialer {
	return workload.Dialer{Timeout: timeout, PoolSize: 2, Unchecked: !m.o.ConnCheck}
}

// goRedisLoop runs n goroutines for d, each with its own go-redis client
// (clientOptions) sending SET key value NX PX 30000 and then DEL key on a
// key of its own, with nothing else: no context deadline, no history, no
// strategy or workload code. Its command rate is the ceiling of any
// go-redis harness on this machine. The rate counts what the server served
// (INFO commandstats) per second of the loop.
func (m *meter) goRedisLoop(ctx context.Context, n int, d time.Duration) (Measure, error) {
	clients := make([]*redis.Client, n)
	for i := range clients {
		clients[i] = redis.NewClient(m.clientOptions(5 * time.Second))
		defer clients[i].Close()
		if err := clients[i].Ping(ctx).Err(); err != nil {
			return Measure{}, fmt.Errorf("%w: perf: go-redis loop: %v", cluster.ErrEnvironment, err)
		}
	}
	win, err := m.open(ctx)
	if err != nil {
		return Measure{}, err
	}
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	labels := pprof.WithLabels(ctx, pprof.Labels("tool", "go-redis-loop")) // see Measure.Tool
	for i, c := range clients {
		key := fmt.Sprintf("lb:loop:%d", i)
		wg.Go(func() {
			pprof.SetGoroutineLabels(labels)
			bg := context.WithoutCancel(ctx) // no deadline per call: the loop's cost alone
			for lctx.Err() == nil {
				if err := c.SetNX(bg, key, "value", TTL).Err(); err != nil {
					errs[i] = err
					return
				}
				if err := c.Del(bg, key).Err(); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return Measure{}, ctx.Err()
	}
	if err := errors.Join(errs...); err != nil {
		return Measure{}, fmt.Errorf("%w: perf: go-redis loop: %v", cluster.ErrEnvironment, err)
	}
	ms, err := m.close(ctx, win, elapsed)
	if err != nil {
		return Measure{}, err
	}
	ms.Tool, ms.Clients, ms.Keys = "go-redis-loop", n, n
	ms.Grants = int(ms.Commands / 2)
	ms.GrantsPerS = float64(ms.Grants) / elapsed.Seconds()
	return ms, nil
}

// checkHistory loads a recorded history and checks exclusion and the
// resource on it, timing the check.
func checkHistory(outDir string, m *Measure) error {
	if m.History == "" {
		return nil
	}
	t := time.Now()
	h, ops, err := history.Load(filepath.Join(outDir, m.History))
	if err != nil {
		return err
	}
	exc := checker.Exclusion(h, ops, checker.Options{Timeout: time.Minute})
	res := checker.Resource(h, ops, checker.Options{Timeout: time.Minute})
	m.CheckS = time.Since(t).Seconds()
	m.Ops = len(ops)
	m.Check = fmt.Sprintf("exclusion %s, resource %s", exc.Status, res.Status)
	m.exclusion, m.resource = exc.Status, res.Status
	return nil
}

// summarise computes the medians of cmp's rounds.
func (cmp *Comparison) summarise() {
	var rb, lb, un, gr, ratio, cost, libRatio, harness []float64
	var us [4][]float64
	for _, r := range cmp.Rounds {
		for i, m := range r {
			us[i] = append(us[i], m.ClientUsPerCmd())
		}
		rb = append(rb, r[0].CommandsPerS)
		lb = append(lb, r[1].CommandsPerS)
		un = append(un, r[2].CommandsPerS)
		gr = append(gr, r[3].CommandsPerS)
		if r[0].CommandsPerS > 0 {
			libRatio = append(libRatio, r[3].CommandsPerS/r[0].CommandsPerS)
		}
		if r[3].CommandsPerS > 0 {
			harness = append(harness, r[1].CommandsPerS/r[3].CommandsPerS)
		}
		if r[0].CommandsPerS > 0 {
			ratio = append(ratio, r[1].CommandsPerS/r[0].CommandsPerS)
		}
		if r[2].CommandsPerS > 0 {
			cost = append(cost, 1-r[1].CommandsPerS/r[2].CommandsPerS)
		}
	}
	cmp.RedisBenchmark, cmp.Lockbench, cmp.Unrecorded, cmp.GoRedis = stat(rb), stat(lb), stat(un), stat(gr)
	cmp.Ratio, cmp.RecordingCost = stat(ratio), stat(cost)
	cmp.LibraryRatio, cmp.HarnessRatio = stat(libRatio), stat(harness)
	for i := range us {
		cmp.ClientUs[i] = stat(us[i])
	}
}

// stat returns the median, min and max of xs (zero for none).
func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{Median: med, Min: s[0], Max: s[len(s)-1]}
}
