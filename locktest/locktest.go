// Package locktest judges a distributed lock written in Go from its own
// go test, as porcupine judges a history: the test gives a constructor of
// the lock for one client and the claims the lock makes, and Run starts
// real servers (redis-server, etcd or ZooKeeper processes on loopback
// ports), runs lockbench's scenarios against the lock (16 clients on one
// key, real faults: killed and paused servers, failovers, partitions,
// clock jumps, paused and crashed clients), records each run's history
// and checks it with lockbench's checkers against what the claims
// predict. A violation fails the test with the verdict, the witnesses and
// a command that reproduces the run; the results folder (report,
// histories, porcupine visualisations) is kept and its path printed.
//
// It reuses lockbench run's stages unchanged: the workload, the
// scenarios' nemeses, the checkers and the claims-derived expectations
// (verdicts.FromClaims, as for an adapter process). A busy machine makes a
// run inconclusive, logged, never a failure. Everything Run starts (server
// processes, goroutines, temporary folders) is stopped or removed when the
// test ends; the servers die with the test binary even when it is killed.
//
//	func TestMyLock(t *testing.T) {
//		locktest.Run(t, func(c locktest.Clients) (locktest.Lock, error) {
//			return mylock.New(c.Redis[0], c.TTL), nil
//		}, locktest.Claims{AtomicAcquire: true, TokenRelease: true})
//	}
//
// Run needs redis-server on PATH (etcd and ZooKeeper for locks on them;
// a Docker daemon and a Redis image with WithDocker): without it the test
// fails naming the install step, or is skipped under go test -short. See
// the README's "Test your Go lock in go test".
package locktest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/preflight"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/redislog"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// Environment variables that override Run's options, so that a failure's
// reproduce command runs the one failing scenario and seed again.
const (
	// EnvScenarios is a comma-separated list of scenarios that replaces
	// the set Run would run.
	EnvScenarios = "LOCKTEST_SCENARIOS"
	// EnvSeed is the seed (≥ 1) that replaces WithSeed's.
	EnvSeed = "LOCKTEST_SEED"
)

// InstallStep names how to install the servers Run starts.
const InstallStep = "run `make deps` in a lockbench checkout (apt-get installs redis-server, redis-sentinel, gcc and ZooKeeper with a JVM; etcd is built into bin/etcd), or in your CI a step `apt-get install -y redis-server gcc` (plus `zookeeper` for a lock on ZooKeeper)"

// Option changes what Run does; the With functions make them.
type Option func(*options)

type options struct {
	scenarios []string
	seed      int64
	ttl       time.Duration
	server    Server
	outDir    string
	crash     string // WithCrashPoint's
	docker    bool   // WithDocker: the docker backend
	image     string // its image
}

// WithScenarios runs these scenarios (lockbench list names them) instead
// of DefaultScenarios. A scenario that does not apply to the lock's
// claims or server fails the test.
func WithScenarios(names ...string) Option {
	return func(o *options) { o.scenarios = slices.Clone(names) }
}

// WithSeed seeds every run's workload and faults (default 1): the same
// seed replays the same plan.
func WithSeed(seed int64) Option { return func(o *options) { o.seed = seed } }

// WithTTL sets the lock's TTL (default 100 ms on Redis, as lockbench
// bench's ci profile; at least 1 s on etcd and ZooKeeper). Scenarios
// raise it where their faults need a longer one, as lockbench run does.
func WithTTL(ttl time.Duration) Option { return func(o *options) { o.ttl = ttl } }

// WithServer says which server the lock lives on (default Redis).
func WithServer(s Server) Option { return func(o *options) { o.server = s } }

// WithCrashPoint declares the point inside the lock's Acquire where its
// acquire is half done (a lock that sets its key and the key's TTL in two
// commands: between them), as an adapter's hello declares its crash
// points: the lock calls Clients.AtPoint(ctx, point) there, and
// crash-between kills the client at that point instead of inside its
// critical section (with Claims.AtomicAcquire false it then expects the
// key left without a TTL: a deadlock). Default: none.
func WithCrashPoint(point string) Option { return func(o *options) { o.crash = point } }

// WithDocker runs the Redis servers as containers of image (lockbench's
// docker backend, through testcontainers-go) instead of redis-server
// processes: "" is dockerd.DefaultImage (redis:7.4), and
// "lockbench/redis:local" is the image `make docker-image` builds from
// this machine's redis-server. The image must be on the machine (never
// pulled). Locks on etcd and ZooKeeper run on processes only. Scenarios
// the docker backend cannot inject (clock-jump: no clock shim in a
// container; failover-lost-write: replication through a proxy on this
// host) are left out of the default set, and named; asked for by
// WithScenarios, they fail the test.
func WithDocker(image string) Option {
	return func(o *options) { o.docker, o.image = true, image }
}

// WithResults writes the results into dir (created) and keeps them,
// passed or failed (results.json and the histories; the report too when
// the test failed); without it they go to a temporary folder removed
// when the test passes.
func WithResults(dir string) Option { return func(o *options) { o.outDir = dir } }

// DefaultScenarios returns the scenarios Run runs for a lock with claims
// on server: the scenarios of lockbench bench's ci profile that apply to
// it (on etcd and ZooKeeper: baseline, gc-pause and leader-kill, as the
// ci profile runs its consensus locks), plus node-pause on Redis, where a
// release without an ownership check shows. short (go test -short) runs
// baseline and node-pause on Redis, baseline on etcd and ZooKeeper:
// seconds.
func DefaultScenarios(claims Claims, server Server, short bool) []string {
	st := &strategy{claims: claims, server: server}
	info := st.Info()
	var want []string
	switch {
	case server == Etcd || server == ZooKeeper:
		want = []string{"baseline", "gc-pause", "leader-kill"}
		if short {
			want = want[:1]
		}
	case short:
		want = []string{"baseline", "node-pause"}
	default:
		p, _ := bench.LookupProfile("ci")
		want = append(slices.Clone(p.Scenarios), "node-pause")
	}
	var out []string
	for _, name := range want {
		if sc, err := chaos.Lookup(name); err == nil {
			if ok, _ := sc.AppliesTo(info); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// Run tests the lock that newLock builds (one Lock per client) against
// real servers under the scenarios (DefaultScenarios unless WithScenarios
// or LOCKTEST_SCENARIOS says otherwise), each once with the seed, and
// judges every history by what claims predict. It fails t for every
// scenario whose verdict contradicts the expectation (a violation of a
// must-hold check, or a must-break canary not seen), with the witnesses
// and a reproduce command; inconclusive runs (too little evidence, a
// busy machine) are logged, never failed. Missing servers fail t naming
// InstallStep (skip it under -short). Run honours t's deadline (go test
// -timeout): scenarios that would outlast it are left out and logged; and
// Ctrl-C: the run stops, its servers are stopped and its temporary folder
// removed, then the test binary exits on the signal.
//
// t is usually a *testing.T; any testing.TB works (a *testing.T also
// gives the deadline). Run silences go-redis's package logger (its
// failed-dial lines: under faults they are expected, and every failed
// call is in the history).
func Run(t testing.TB, newLock func(Clients) (Lock, error), claims Claims, opts ...Option) {
	t.Helper()
	o := options{seed: 1, server: Redis}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.fromEnv(); err != nil {
		t.Fatalf("locktest: %v", err)
	}
	if newLock == nil {
		t.Fatalf("locktest: Run needs a constructor of the lock (newLock is nil)")
	}
	redislog.Quiet() // under faults every failed dial is expected, and in the history
	st := &strategy{name: "go:" + t.Name(), claims: claims, server: o.server, crash: o.crash, newLock: newLock}
	if err := o.check(claims); err != nil {
		t.Fatalf("locktest: %v", err)
	}
	// Ctrl-C (SIGINT) stops the run: its servers are stopped and its
	// temporary folder removed before the test binary exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	copts := o.cluster()
	if err := checkServers(ctx, copts, st); err != nil {
		missingServers(t, err, o.docker)
		return
	}
	specs, skipped, err := o.specs(st, t.Name(), testing.Short())
	if err != nil {
		t.Fatalf("locktest: %v", err)
	}
	for _, sk := range skipped {
		t.Logf("locktest: %s", sk)
	}
	dir, err := o.resultsDir(t)
	if err != nil {
		t.Fatalf("locktest: results folder: %v", err)
	}
	deadline, hasDeadline := testDeadline(t)
	started := time.Now().UTC().Format(time.RFC3339)
	var runs []results.Run
	for i, s := range specs {
		s.OutDir = dir
		if hasDeadline {
			if need := budget(s); time.Until(deadline) < need {
				t.Logf("locktest: %s and %d more scenarios not run: the test's deadline (go test -timeout) leaves %v, a run needs about %v",
					s.Scenario, len(specs)-i-1, time.Until(deadline).Round(time.Second), need.Round(time.Second))
				if len(runs) == 0 {
					t.Errorf("locktest: no scenario ran before the test's deadline: give go test a longer -timeout")
				}
				break
			}
		}
		r, ok := runOne(ctx, t, s)
		if ctx.Err() != nil {
			interrupted(t, dir, o.outDir == "", stop)
			return
		}
		if !ok {
			break
		}
		runs = append(runs, r)
	}
	writeResults(t, dir, st, runs, started, o.seed, t.Failed())
}

// interrupted ends Run after Ctrl-C: the run has stopped its servers;
// the temporary results folder dir (temp) is removed; then the signal's
// handler is stopped (stop) and SIGINT raised again, so that the test
// binary exits as Ctrl-C asked once every Run in it has cleaned up (a Run
// still running keeps the signal until it has). If the binary survives
// (the test handles SIGINT itself), the test fails.
func interrupted(t testing.TB, dir string, temp bool, stop func()) {
	t.Helper()
	if temp {
		os.RemoveAll(dir)
	}
	fmt.Fprintf(os.Stderr, "locktest: %s interrupted (Ctrl-C): its run, servers and temporary folders are gone\n", t.Name())
	stop()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	// The signal reaches the process on another thread, a moment later:
	// failing the test at once could end the binary with exit status 1
	// before it does.
	time.Sleep(signalGrace)
	t.Fatalf("locktest: interrupted (Ctrl-C): the run was stopped")
}

// signalGrace is how long Run waits for the SIGINT it raised again to end
// the test binary before it fails the test instead.
const signalGrace = time.Second

// check refuses options that contradict each other or the claims.
func (o *options) check(claims Claims) error {
	switch {
	case o.server != Redis && o.server != Etcd && o.server != ZooKeeper:
		return fmt.Errorf("unknown server %q (valid: %s, %s, %s)", o.server, Redis, Etcd, ZooKeeper)
	case claims.Quorum && o.server != Redis:
		return fmt.Errorf("Claims.Quorum means 5 independent Redis nodes; a lock on %s gets its quorum from the server", o.server)
	case o.docker && o.server != Redis:
		return fmt.Errorf("WithDocker runs Redis only; a lock on %s runs on the server's processes (drop WithDocker)", o.server)
	case claims.AtomicAcquire && o.crash != "":
		return fmt.Errorf("WithCrashPoint(%q) names where an acquire is half done, but the lock claims AtomicAcquire: drop one", o.crash)
	}
	return nil
}

// cluster is the cluster options of every run: the process backend, or
// the docker backend with its image.
func (o *options) cluster() cluster.Options {
	if !o.docker {
		return cluster.Options{Backend: cluster.BackendProcess}
	}
	img := o.image
	if img == "" {
		img = dockerd.DefaultImage
	}
	return cluster.Options{Backend: cluster.BackendDocker, Image: img}
}

// checkServers checks that the servers st's lock runs on can be started
// before any run: etcd or ZooKeeper (cluster.CheckTopology), else
// redis-server, or the Docker daemon and its image (preflight.CheckBackend).
// The error wraps cluster.ErrEnvironment and names what is missing.
func checkServers(ctx context.Context, copts cluster.Options, st *strategy) error {
	if st.server != Redis {
		return cluster.CheckTopology(copts, chaos.StrategyTopology(st.Info()))
	}
	return preflight.CheckBackend(ctx, copts, "", nil, nil)
}

// specs are the runs of st that Run makes, as lockbench bench's ci
// profile would make them (bench.WorkloadFor), for the test named test;
// skipped says which default scenarios the backend cannot run. A scenario
// asked for that does not resolve (does not apply, or cannot run on the
// backend) is an error.
func (o *options) specs(st *strategy, test string, short bool) (specs []bench.Spec, skipped []string, err error) {
	p, err := bench.LookupProfile("ci")
	if err != nil {
		return nil, nil, err
	}
	copts := o.cluster()
	scenarios, asked := o.scenarios, len(o.scenarios) > 0
	if !asked {
		scenarios = DefaultScenarios(st.claims, st.server, short)
	}
	for _, sc := range scenarios {
		base := bench.WorkloadFor(st, p, sc)
		if o.ttl > 0 {
			base.TTL = o.ttl
		}
		s := bench.Spec{Strategy: st.name, Lock: st, Scenario: sc, Seed: o.seed, Workload: base, Cluster: copts,
			Command: reproduce(test, sc, o.seed)}
		if _, _, _, _, err := s.Resolved(); err != nil {
			if scn, lerr := chaos.Lookup(sc); !asked && lerr == nil && scn.UnsupportedOn(copts, st.Info()) != "" {
				skipped = append(skipped, fmt.Sprintf("%s not run: %s", sc, scn.UnsupportedOn(copts, st.Info())))
				continue
			}
			return nil, nil, fmt.Errorf("scenario %s: %w", sc, err)
		}
		specs = append(specs, s)
	}
	return specs, skipped, nil
}

// runOne runs s, reruns it once with the next seed and twice the duration
// when it is inconclusive (as lockbench bench does), and reports its
// outcome on t. ok is false when the run could not be carried out (t has
// failed then).
func runOne(ctx context.Context, t testing.TB, s bench.Spec) (results.Run, bool) {
	t.Helper()
	r, err := bench.Run(ctx, s)
	if ctx.Err() != nil {
		return r, false // Ctrl-C: Run says so
	}
	if err == nil && r.Outcome() == results.OutcomeInconclusive {
		again := s
		again.Seed++
		_, _, _, w, _ := s.Resolved()
		again.Workload.Duration = 2 * w.Duration
		again.Command = reproduce(t.Name(), s.Scenario, again.Seed)
		t.Logf("locktest: %s seed %d inconclusive (%s); rerunning with seed %d for %v", s.Scenario, s.Seed, missing(r), again.Seed, again.Workload.Duration)
		if r2, err2 := bench.Run(ctx, again); err2 == nil || errors.Is(err2, bench.ErrOverloaded) {
			r, err = r2, err2
		}
	}
	return r, judged(t, s, r, err)
}

// judged reports the outcome of run s (r, err) on t as lockbench run
// would exit: an unexpected verdict fails t with its witnesses and the
// reproduce command; an inconclusive run (too little evidence, or a busy
// machine: bench.ErrOverloaded) and a run as expected are logged. It
// returns false when the run could not be carried out (t has failed
// then).
func judged(t testing.TB, s bench.Spec, r results.Run, err error) bool {
	t.Helper()
	switch {
	case errors.Is(err, bench.ErrOverloaded):
		t.Logf("locktest: %s seed %d INCONCLUSIVE: %v", r.Scenario, r.Seed, err)
		return true
	case errors.Is(err, cluster.ErrEnvironment):
		missingServers(t, err, s.Cluster.Backend == cluster.BackendDocker)
		return false
	case err != nil:
		t.Errorf("locktest: %s seed %d could not run: %v", s.Scenario, s.Seed, err)
		return false
	}
	switch r.Outcome() {
	case results.OutcomeUnexpected:
		t.Errorf("%s", failure(r, s.OutDir))
	case results.OutcomeInconclusive:
		t.Logf("locktest: %s seed %d INCONCLUSIVE (expected %s; nothing contradicts it, but %s)", r.Scenario, r.Seed, r.Expected, missing(r))
	default:
		t.Logf("locktest: %s seed %d as expected (%s): exclusion %s, resource %s, liveness %s; %d grants",
			r.Scenario, r.Seed, r.Expected, r.Verdict.Exclusion, r.Verdict.Resource, r.Verdict.Liveness, r.Grants)
	}
	return true
}

// DockerStep names how to get the docker backend WithDocker runs on.
const DockerStep = "start Docker (systemctl start docker, or set DOCKER_HOST) and build the image from this machine's redis-server with `make docker-image` in a lockbench checkout, then pass WithDocker(\"lockbench/redis:local\"); or drop WithDocker and install redis-server"

// missingServers fails t (skips it under -short) naming the missing
// server and InstallStep (DockerStep on the docker backend).
func missingServers(t testing.TB, err error, docker bool) {
	t.Helper()
	msg := fmt.Sprintf("locktest: the servers this lock runs on cannot be started: %v; to install them, %s", err, InstallStep)
	if docker {
		msg = fmt.Sprintf("locktest: the docker backend cannot run: %v; to fix it, %s", err, DockerStep)
	}
	if testing.Short() {
		t.Skip(msg)
	}
	t.Fatal(msg)
}

// missing joins what each inconclusive check lacked.
func missing(r results.Run) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(r.Missing)) {
		out = append(out, name+": "+r.Missing[name].String())
	}
	if len(out) == 0 {
		return "a gated check lacked evidence"
	}
	return strings.Join(out, "; ")
}

// maxWitnessLines bounds the witness lines per check in a failure.
const maxWitnessLines = 3

// failure is the message Run fails a test with for a run whose verdict
// contradicts its expectation: the scenario, seed, expectation and
// verdict, what contradicted it, the reason, the witnesses (at most 3 per
// check), the history (in the results folder dir) and the reproduce
// command.
func failure(r results.Run, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "locktest: %s seed %d: expected %s; exclusion %s, resource %s, liveness %s",
		r.Scenario, r.Seed, r.Expected, r.Verdict.Exclusion, r.Verdict.Resource, r.Verdict.Liveness)
	if r.Verdict.Fencing != "" && r.Verdict.Fencing != checker.Skipped {
		fmt.Fprintf(&b, ", fencing %s", r.Verdict.Fencing)
	}
	if r.Verdict.Reentrancy != "" && r.Verdict.Reentrancy != checker.Skipped {
		fmt.Fprintf(&b, ", reentrancy %s", r.Verdict.Reentrancy)
	}
	fmt.Fprintf(&b, "; %d grants\n  UNEXPECTED: %s\n  why expected: %s\n", r.Grants, strings.Join(r.Unexpected, "; "), r.Reason)
	for _, line := range witnessLines(r) {
		fmt.Fprintf(&b, "  witness: %s\n", line)
	}
	fmt.Fprintf(&b, "  history: %s\n  reproduce: %s", filepath.Join(dir, r.History), r.Command)
	return b.String()
}

// witnessLines are r's witnesses as text, at most maxWitnessLines per
// check, with how many more there were: the checks whose verdict was
// unexpected first.
func witnessLines(r results.Run) []string {
	w := r.Witnesses
	checks := []struct {
		name  string
		lines []string
		total int
	}{
		{"exclusion", stringsOf(w.Exclusion), w.Total.Exclusion},
		{"resource", stringsOf(w.Resource), w.Total.Resource},
		{"fencing", stringsOf(w.Fencing), w.Total.Fencing},
		{"reentrancy", stringsOf(w.Reentrancy), w.Total.Reentrancy},
		{"liveness", stringsOf(w.Liveness), w.Total.Liveness},
		{"renewal", stringsOf(w.Renewal), w.Total.Renewal},
		{"orphans", stringsOf(w.Orphans), w.Total.Orphans},
		{"lost", stringsOf(w.Lost), w.Total.Lost},
		{"extends", stringsOf(w.Extends), w.Total.Extends},
	}
	unexpected := func(name string) bool {
		return slices.ContainsFunc(r.Unexpected, func(u string) bool { return strings.HasPrefix(u, name+" ") || strings.HasPrefix(u, name+":") })
	}
	slices.SortStableFunc(checks, func(a, b struct {
		name  string
		lines []string
		total int
	}) int {
		ua, ub := unexpected(a.name), unexpected(b.name)
		switch {
		case ua && !ub:
			return -1
		case ub && !ua:
			return 1
		}
		return 0
	})
	var out []string
	for _, c := range checks {
		for i, l := range c.lines {
			if i == maxWitnessLines {
				break
			}
			out = append(out, c.name+": "+l)
		}
		if n := max(c.total, len(c.lines)) - min(len(c.lines), maxWitnessLines); n > 0 {
			out = append(out, fmt.Sprintf("%s: %d more (results.json)", c.name, n))
		}
	}
	return out
}

func stringsOf[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// reproduce is the command that runs one scenario of the test again: in
// the test's package folder, the scenario and seed by environment, the
// test alone by -run.
func reproduce(test, scenario string, seed int64) string {
	var parts []string
	for _, p := range strings.Split(test, "/") {
		parts = append(parts, "^"+regexpQuote(p)+"$")
	}
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return fmt.Sprintf("cd %s && %s=%s %s=%d go test -count=1 -run '%s' .", shellQuote(dir), EnvScenarios, scenario, EnvSeed, seed, strings.Join(parts, "/"))
}

// regexpQuote escapes the regexp metacharacters of a test name part.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fromEnv applies EnvScenarios and EnvSeed.
func (o *options) fromEnv() error {
	if v := os.Getenv(EnvScenarios); v != "" {
		o.scenarios = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				o.scenarios = append(o.scenarios, s)
			}
		}
	}
	if v := os.Getenv(EnvSeed); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a seed ≥ 1", EnvSeed, v)
		}
		o.seed = n
	}
	if o.seed < 1 {
		return fmt.Errorf("seed %d: want a seed ≥ 1", o.seed)
	}
	return nil
}

// resultsDir makes the results folder: WithResults's (kept), else a
// temporary one that t's clean-up removes unless t failed, when it
// prints its path.
func (o *options) resultsDir(t testing.TB) (string, error) {
	if o.outDir != "" {
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return "", err
		}
		return o.outDir, nil
	}
	dir, err := os.MkdirTemp("", "locktest-")
	if err != nil {
		return "", err
	}
	t.Cleanup(func() {
		if _, err := os.Stat(dir); err != nil {
			return // removed after Ctrl-C
		}
		if t.Failed() {
			t.Logf("locktest: results kept in %s (report.md, histories/)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir, nil
}

// testDeadline is t's deadline (go test -timeout) less a margin for the
// clean-up, when t has one.
func testDeadline(t testing.TB) (time.Time, bool) {
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return time.Time{}, false
	}
	at, has := d.Deadline()
	return at.Add(-deadlineMargin), has
}

// deadlineMargin is kept free before the test's deadline for the report
// and the clean-up.
const deadlineMargin = 10 * time.Second

// budget is about how long a run of s takes: its duration, the rerun an
// inconclusive one may need (twice it), and starting the servers.
func budget(s bench.Spec) time.Duration {
	_, _, _, w, err := s.Resolved()
	if err != nil {
		return 0
	}
	return 3*w.Duration + startup(w)
}

// startup is about how long starting and stopping a run's servers takes.
func startup(w workload.Config) time.Duration { return 2*time.Second + 2*w.TTL }

// writeResults writes results.json of runs into dir, as lockbench run
// does, and the report (with its plots) when withReport is set: a failed test
// leaves a report to read.
func writeResults(t testing.TB, dir string, st *strategy, runs []results.Run, started string, seed int64, withReport bool) {
	t.Helper()
	if len(runs) == 0 {
		return
	}
	var scenarios []string
	for _, r := range runs {
		scenarios = append(scenarios, r.Scenario)
	}
	f := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench " + bench.Version + " (locktest)", Commit: bench.Commit(), Profile: "locktest",
		Command: reproduce(t.Name(), strings.Join(scenarios, ","), seed), Seed: seed, Repeat: 1, Started: started,
		Finished: time.Now().UTC().Format(time.RFC3339),
		Config:   results.BenchConfig{Strategies: []string{st.name}, Scenarios: scenarios, Workload: runs[0].Config},
		Host:     results.ThisHost(), Redis: runs[0].Redis, Strategies: []results.StrategyInfo{bench.StrategyInfo(st)}, Runs: runs,
	}
	if err := figures.Write(dir, f); err != nil {
		t.Logf("locktest: results.json not written: %v", err)
		return
	}
	if !withReport {
		return
	}
	if err := report.Render(dir, f); err != nil {
		t.Logf("locktest: report not written: %v", err)
		return
	}
	t.Logf("locktest: report: %s", filepath.Join(dir, "report.md"))
}
