package mutants_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster/clockshim"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/mutants"
)

// AllEnv names the environment variable that turns TestMutantsKilled
// into the full sweep: every cell of every mutant, every seed (about 10
// minutes on 2 cores; `make mutants` runs the same and prints the table).
// Unset, make test runs the cells in subset, one seed each.
const AllEnv = "LOCKBENCH_MUTANTS"

// subset are the cells make test keeps killing, one seed each (a
// mutant's name and the index of its cell in Kills), one per kind of
// kill: a server fault and exclusion; a lost reply, a protocol-2 token
// and the orphan check; a quorum lock's extend under nodes dying with
// critical sections at 0.6×TTL, where an adapter once lost its claims'
// gate.
var subset = map[string]int{"release-no-token": 0, "retry-no-token-check": 0, "extend-releases-all": 1}

// programs builds lockbench and the zoo's adapter once into a temporary
// folder, for every test.
var programs = sync.OnceValues(func() (mutants.Programs, error) {
	dir, err := os.MkdirTemp("", "lockbench-mutants-test-")
	if err != nil {
		return mutants.Programs{}, err
	}
	builtIn = dir
	py, err := filepath.Abs(pyAdapter)
	if err != nil {
		return mutants.Programs{}, err
	}
	p := mutants.Programs{Lockbench: filepath.Join(dir, "lockbench"), Adapter: filepath.Join(dir, "lockbench-mutant"), Out: filepath.Join(dir, "out"),
		Python: python + " " + py}
	for _, b := range [][2]string{{p.Lockbench, "../cmd/lockbench"}, {p.Adapter, "./testdata/adapter"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return p, &buildError{b[1], err, out}
		}
	}
	return p, nil
})

// python is the interpreter of the zoo's Python adapter (Debian's, which
// python3-redis is for), and pyAdapter its script.
const python, pyAdapter = "/usr/bin/python3", "testdata/pyadapter/adapter.py"

type buildError struct {
	pkg string
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build " + e.pkg + ": " + e.err.Error() + "\n" + string(e.out)
}

// builtIn is the folder programs built into ("": none yet); TestMain
// removes it.
var builtIn string

func TestMain(m *testing.M) {
	code := m.Run()
	if builtIn != "" {
		os.RemoveAll(builtIn)
	}
	os.Exit(code)
}

// TestZooTable: every mutant names a lock of the zoo, a bug class, what it
// does, what its kill needs and at least one cell with seeds; names are
// unique; every cell that kills today names a lockbench scenario.
func TestZooTable(t *testing.T) {
	if len(mutants.Zoo) < 12 {
		t.Errorf("the zoo has %d mutants; it must keep at least 12", len(mutants.Zoo))
	}
	seen := map[string]bool{}
	for _, m := range mutants.Zoo {
		if seen[m.Name] || m.Name == "none" {
			t.Errorf("mutant %q: a duplicate name (or none, the unmutated lock's)", m.Name)
		}
		seen[m.Name] = true
		if _, err := mutants.LookupLock(m.Lock); err != nil {
			t.Errorf("mutant %s: %v", m.Name, err)
		}
		if m.Class == "" || m.Does == "" || m.Needs == "" || len(m.Kills) == 0 {
			t.Errorf("mutant %s: want a class, what it does, what its kill needs and a killing cell: %+v", m.Name, m)
		}
		for _, c := range m.Kills {
			if len(c.Seeds) == 0 {
				t.Errorf("mutant %s, cell %s: no seeds", m.Name, c)
			}
			if _, err := chaos.Lookup(c.Scenario); err != nil && c.Awaits == "" {
				t.Errorf("mutant %s, cell %s: %v (a scenario lockbench does not have yet: say what the cell awaits)", m.Name, c, err)
			}
		}
		if got, err := mutants.Lookup(m.Lock, m.Name); err != nil || got.Name != m.Name {
			t.Errorf("Lookup(%s, %s) = %v, %v", m.Lock, m.Name, got.Name, err)
		}
	}
	if _, err := mutants.Lookup("token-lua", "extend-releases-all"); err == nil {
		t.Error("Lookup of a mutant under another lock: no error")
	}
}

// TestDocsListEveryMutant: docs/mutants.md's table names every mutant
// and every correct lock of the zoo.
func TestDocsListEveryMutant(t *testing.T) {
	b, err := os.ReadFile("../docs/mutants.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutants.Zoo {
		if !strings.Contains(string(b), "| `"+m.Name+"` | "+m.Lock+" |") {
			t.Errorf("docs/mutants.md's table has no row for mutant %s (of %s)", m.Name, m.Lock)
		}
	}
	for _, l := range mutants.Locks {
		if !strings.Contains(string(b), "`"+l.Name+"`") {
			t.Errorf("docs/mutants.md does not name the zoo's lock %s", l.Name)
		}
	}
}

// mutantMark is a mutation's marker in the adapter's source: every bug is
// a block commented "MUTANT name: what it does".
var mutantMark = regexp.MustCompile(`MUTANT ([a-z0-9-]+):`)

// TestAdapterMarksEveryMutant: every mutant of the table is a marked diff
// in the adapter's source, and every marked diff is in the table.
func TestAdapterMarksEveryMutant(t *testing.T) {
	files, err := filepath.Glob("testdata/adapter/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the adapter's sources: %v", err)
	}
	files = append(files, pyAdapter)
	marked := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mutantMark.FindAllStringSubmatch(string(b), -1) {
			marked[m[1]] = true
		}
	}
	for _, m := range mutants.Zoo {
		if !marked[m.Name] {
			t.Errorf("mutant %s: no block marked \"MUTANT %s:\" in testdata/adapter or %s", m.Name, m.Name, pyAdapter)
		}
		delete(marked, m.Name)
	}
	for name := range marked {
		t.Errorf("the zoo's adapters mark a mutant %s that the zoo's table does not list", name)
	}
}

// TestHello: the adapter declares the claims, nodes and extend of the
// lock a mutant derives from, whatever its bug, and refuses a bug of
// another lock (exit 2).
func TestHello(t *testing.T) {
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range mutants.Locks {
		for _, bug := range append([]string{"none"}, mutants.Bugs(l.Name)...) {
			argv := append(strings.Fields(p.AdapterFor(l.Name)), "--lock", l.Name, "--bug", bug)
			out, err := exec.Command(argv[0], argv[1:]...).Output() // stdin is empty: hello, then exit
			if err != nil {
				t.Fatalf("--lock %s --bug %s: %v", l.Name, bug, err)
			}
			var h struct {
				Type     string          `json:"type"`
				Protocol int             `json:"protocol"`
				Nodes    int             `json:"nodes"`
				Extend   bool            `json:"extend"`
				Claims   map[string]bool `json:"claims"`
			}
			line, _, _ := strings.Cut(string(out), "\n")
			if err := json.Unmarshal([]byte(line), &h); err != nil {
				t.Fatalf("--lock %s --bug %s: hello %q: %v", l.Name, bug, line, err)
			}
			var claims []string
			for c, on := range h.Claims {
				if on {
					claims = append(claims, c)
				}
			}
			slices.Sort(claims)
			want := slices.Sorted(slices.Values(l.Claims))
			if h.Type != "hello" || h.Nodes != l.Nodes || h.Extend != l.Extend || len(h.Claims) != 7 || !slices.Equal(claims, want) {
				t.Errorf("--lock %s --bug %s: hello %s; want %d nodes, extend %v, claims %v (all seven named)", l.Name, bug, line, l.Nodes, l.Extend, want)
			}
		}
	}
	cmd := exec.Command(p.Adapter, "--lock", "token-lua", "--bug", "extend-releases-all")
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("a bug of another lock: %v, want exit 2", err)
	}
	cmd = exec.Command(p.Adapter, "--lock", "local-validity", "--bug", "none")
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("the Go adapter asked for a lock of the Python adapter: %v, want exit 2", err)
	}
}

// TestMutantsKilled runs mutants' killing cells through lockbench's CLI:
// each must exit 1 for the mutant (a gated violation) and 0 for its twin,
// the unmutated lock, seed by seed. make test runs subset with each
// cell's first seed; with AllEnv=all, every mutant, cell and seed.
//
// A cell that awaits what lockbench lacks (Cell.Awaits) is run only in
// the full sweep, and reported, not failed: a survivor there is a
// finding. A run that ends without a verdict after its retries (exit 3 or
// 4: a machine too busy to trust, too little evidence) is reported and
// not judged.
func TestMutantsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	all := os.Getenv(AllEnv) == "all"
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, "lockbench-mutan")...)
	for _, m := range mutants.Zoo {
		for i, c := range m.Kills {
			if cell, ok := subset[m.Name]; !all && (!ok || cell != i) {
				continue
			}
			if c.Awaits != "" && !all {
				t.Logf("%s, %s: not run: awaits %s", m.Name, c, c.Awaits)
				continue
			}
			if !all {
				c.Seeds = c.Seeds[:1]
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			cr, err := mutants.RunCell(ctx, p, m, c)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			judgeCell(t, m, cr)
		}
	}
}

// judgeCell fails the test for a cell that should kill its mutant today
// and did not: the mutant exited 0 or 2, or the twin exited 1 or 2.
func judgeCell(t *testing.T, m mutants.Mutant, cr mutants.CellResult) {
	t.Helper()
	for i, seed := range cr.Cell.Seeds {
		mr, tr := cr.Mutant[i], cr.Twin[i]
		var bad []string
		if mr.Exit != mutants.ExitUnexpected {
			bad = append(bad, "the mutant exited "+exitName(mr.Exit)+": "+mr.Line)
		}
		if tr.Exit != mutants.ExitExpected {
			bad = append(bad, "the twin (--bug none) exited "+exitName(tr.Exit)+": "+tr.Line)
		}
		switch {
		case len(bad) == 0:
			t.Logf("%s, %s seed %d: killed (the mutant exited 1, the twin 0)", m.Name, cr.Cell, seed)
		case cr.Cell.Awaits != "":
			t.Logf("%s, %s seed %d: not killed; it awaits %s: %s", m.Name, cr.Cell, seed, cr.Cell.Awaits, strings.Join(bad, "; "))
		case noVerdict(mr.Exit) || noVerdict(tr.Exit):
			t.Logf("%s, %s seed %d: no verdict after retries (machine or evidence), not judged: %s", m.Name, cr.Cell, seed, strings.Join(bad, "; "))
		default:
			t.Errorf("%s, %s seed %d: %s (reproduce: %s)", m.Name, cr.Cell, seed, strings.Join(bad, "; "), reproduce(m, cr.Cell, seed))
		}
	}
}

func noVerdict(code int) bool {
	return code == mutants.ExitEnvironment || code == mutants.ExitInconclusive
}

func exitName(code int) string {
	return map[int]string{0: "0 (as expected)", 1: "1 (unexpected verdict)", 2: "2 (usage)", 3: "3 (environment)", 4: "4 (inconclusive)"}[code]
}

// reproduce is the command line that runs the cell by hand from the
// repository's root.
func reproduce(m mutants.Mutant, c mutants.Cell, seed int64) string {
	adapter := mutants.Programs{Adapter: "bin/lockbench-mutant", Python: python + " mutants/" + pyAdapter}.AdapterFor(m.Lock)
	return "lockbench run --strategy '" + mutants.Strategy(adapter, m.Lock, m.Name) + "' --scenario " + c.Scenario +
		" --seed " + strconv.FormatInt(seed, 10) + " " + strings.Join(c.Args, " ")
}

// TestWriteTable: the table ends with "mutants: K of N killed", counts a
// mutant killed only when every cell killed it in every seed, and names
// the run that did not do as it should.
func TestWriteTable(t *testing.T) {
	cell := func(awaits string, seeds ...int64) mutants.Cell {
		return mutants.Cell{Scenario: "baseline", Seeds: seeds, Awaits: awaits}
	}
	run := func(codes ...int) []mutants.Run {
		var rs []mutants.Run
		for _, c := range codes {
			rs = append(rs, mutants.Run{Exit: c, Attempts: 1, Line: "verdict line"})
		}
		return rs
	}
	rs := []mutants.Result{
		{Mutant: mutants.Mutant{Name: "a", Lock: "token-lua"}, Cells: []mutants.CellResult{{Cell: cell("", 1, 2), Mutant: run(1, 1), Twin: run(0, 0)}}},
		{Mutant: mutants.Mutant{Name: "b", Lock: "token-lua"}, Cells: []mutants.CellResult{{Cell: cell("", 1, 2), Mutant: run(1, 0), Twin: run(0, 0)}}},
		{Mutant: mutants.Mutant{Name: "c", Lock: "token-lua"}, Cells: []mutants.CellResult{
			{Cell: cell("", 1), Mutant: run(1), Twin: run(0)}, {Cell: cell("a fault", 1), Mutant: run(0), Twin: run(0)}}},
	}
	var b strings.Builder
	if err := mutants.WriteTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	sc := bufio.NewScanner(strings.NewReader(out))
	var last string
	for sc.Scan() {
		last = sc.Text()
	}
	if last != "mutants: 1 of 3 killed" {
		t.Errorf("last line %q, want \"mutants: 1 of 3 killed\"; table:\n%s", last, out)
	}
	for _, want := range []string{"SURVIVED in 1 of 2 seeds", "SURVIVED in 1 of 1 seeds", "[awaits: a fault]", "b, baseline seed 2: the mutant exited 0: verdict line"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// startRedis starts a redis-server on a free loopback port, killed when
// the test ends, and returns its address and process.
func startRedis(t *testing.T) (string, *os.Process) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v (install it: apt-get install redis-server)", err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, cmd.Process
		}
	}
	t.Fatalf("redis-server on %s did not answer", addr)
	return "", nil
}

// adapterConn is a running zoo adapter: its stdin, and its stdout's lines.
type adapterConn struct {
	in    io.WriteCloser
	lines chan map[string]any
}

func (a adapterConn) send(t *testing.T, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// reply waits up to d for the reply to request id (other lines skipped).
func (a adapterConn) reply(t *testing.T, id int, d time.Duration) map[string]any {
	t.Helper()
	timer := time.After(d)
	for {
		select {
		case m := <-a.lines:
			if n, _ := m["in_reply_to"].(float64); int(n) == id {
				return m
			}
		case <-timer:
			t.Fatalf("no reply to request %d within %v", id, d)
		}
	}
}

// TestCancel: an acquire cancelled in flight (its node stopped, so the
// SET waits in the node) answers unknown with reason cancelled in the
// correct lock, which tried to delete its key; cancel-leaves-key answers
// fail at once, and its SET, run when the node resumes, leaves the key
// holding the token it said it did not get.
func TestCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	for _, bug := range []string{"none", "cancel-leaves-key"} {
		t.Run(bug, func(t *testing.T) {
			addr, redis := startRedis(t)
			cmd := exec.Command(p.Adapter, "--lock", "token-lua", "--bug", bug)
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); cmd.Wait() }()
			a := adapterConn{in: in, lines: make(chan map[string]any, 16)}
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					var m map[string]any
					if json.Unmarshal(sc.Bytes(), &m) == nil {
						a.lines <- m
					}
				}
			}()
			if h := <-a.lines; h["cancel"] != true || h["protocol"] != float64(2) {
				t.Fatalf("hello %v: want protocol 2 with cancel", h)
			}
			a.send(t, map[string]any{"type": "init", "id": 1, "endpoints": []string{addr}, "ttl_ms": 200, "owner": "c0"})
			a.reply(t, 1, 5*time.Second)
			redis.Signal(syscall.SIGSTOP)
			a.send(t, map[string]any{"type": "acquire", "id": 2, "key": "k", "deadline_ms": 3000})
			time.Sleep(100 * time.Millisecond)
			a.send(t, map[string]any{"type": "cancel", "id": 3, "request": 2})
			r := a.reply(t, 2, 2*time.Second)
			want := map[string]string{"none": "unknown", "cancel-leaves-key": "fail"}[bug]
			if r["type"] != want || r["reason"] != "cancelled" || r["token"] == nil {
				t.Errorf("the cancelled acquire's reply %v: want %s, reason cancelled, with the token it tried", r, want)
			}
			redis.Signal(syscall.SIGCONT)
			if bug == "none" {
				return
			}
			// The SET ran when the node resumed: the key holds the token
			// the acquire said it did not get.
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(2 * time.Second))
			fmt.Fprintf(c, "GET k\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			if !strings.HasPrefix(line, "$") || line == "$-1\r\n" {
				t.Errorf("after the node resumed GET k = %q, want the orphaned key", line)
			}
		})
	}
}

// TestDiffKillsRetryStorm: lockbench diff of the unmutated token-lua
// against its retry-without-backoff mutant, 4 runs a side of 1 s, exits 1
// with commands per grant (counted on the servers: gated on a busy machine
// too) among its gated differences. Which gated figure ranks first (by
// its p-value) is the machine's noise: grants/s may come first.
func TestDiffKillsRetryStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, "lockbench-mutan")...)
	out := filepath.Join(p.Out, "diff-retry")
	cmd := exec.Command(p.Lockbench, "diff", mutants.Strategy(p.Adapter, "token-lua", "none"), mutants.Strategy(p.Adapter, "token-lua", "retry-without-backoff"),
		"--scenario", "baseline", "--repeat", "4", "--clients", "8", "--duration", "1s", "--out", out, "--quiet", "--json")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("diff of the twin against retry-without-backoff: %v, want exit 1:\n%s%s", err, stdout.String(), stderr.String())
	}
	var rep struct {
		Findings []struct {
			Figure string `json:"figure"`
			Gated  bool   `json:"gated"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("diff --json: %v:\n%s", err, stdout.String())
	}
	var gated []string
	for _, f := range rep.Findings {
		if f.Gated {
			gated = append(gated, f.Figure)
		}
	}
	if !slices.ContainsFunc(gated, func(f string) bool { return strings.Contains(f, "commands per") }) {
		t.Errorf("gated differences %q: want commands per grant among them", gated)
	}
}

// TestClockStepReachesPython is what client-clock-step rests on, in a
// second or two: the zoo's Python adapter started with the clock shim
// preloaded (as lockbench starts it for that scenario), its offset file
// stepped back 2×TTL after a grant. Past the TTL, the correct
// local-validity lock's check (time.monotonic) says not valid and its
// validity-wall-clock mutant's (time.time) says valid; only the mutant's
// process read its wall clock at the new offset (the shim's ".seen"
// file), and the shim's reach is what lockbench finds for a Python
// process.
func TestClockStepReachesPython(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	shim, err := clockshim.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	for _, tt := range []struct {
		bug   string
		valid bool // the check's answer past the TTL, after the step
	}{
		{"none", false},
		{"validity-wall-clock", true},
	} {
		t.Run(tt.bug, func(t *testing.T) {
			addr, _ := startRedis(t)
			off := filepath.Join(t.TempDir(), "clock-offset")
			if err := clockshim.WriteOffset(off, 0); err != nil {
				t.Fatal(err)
			}
			argv := append(strings.Fields(p.Python), "--lock", "local-validity", "--bug", tt.bug)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+shim, clockshim.OffsetEnv+"="+off)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s: %v (install python3-redis: scripts/deps.sh)", p.Python, err)
			}
			defer func() { in.Close(); cmd.Wait() }()
			a := adapterConn{in: in, lines: make(chan map[string]any, 16)}
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					var m map[string]any
					if json.Unmarshal(sc.Bytes(), &m) == nil {
						a.lines <- m
					}
				}
			}()
			select {
			case h := <-a.lines:
				if h["check"] != true {
					t.Fatalf("hello %v: want check", h)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no hello within 10 s (install python3-redis: scripts/deps.sh)", p.Python)
			}
			if err := clockshim.CheckPreloaded(cmd.Process.Pid, shim); err != nil {
				t.Fatal(err)
			}
			if ok, why := clockshim.Reach(cmd.Process.Pid); !ok {
				t.Errorf("ClockReach of a Python adapter: %s", why)
			}
			a.send(t, map[string]any{"type": "init", "id": 1, "endpoints": []string{addr}, "ttl_ms": ttl.Milliseconds(), "owner": "c0"})
			a.reply(t, 1, 5*time.Second)
			a.send(t, map[string]any{"type": "acquire", "id": 2, "key": "k", "deadline_ms": 2000})
			r := a.reply(t, 2, 5*time.Second)
			if r["type"] != "ok" || r["validity_ms"] == nil {
				t.Fatalf("acquire: %v, want ok with a validity", r)
			}
			if err := clockshim.WriteOffset(off, -2*ttl); err != nil {
				t.Fatal(err)
			}
			time.Sleep(ttl + 50*time.Millisecond) // past the TTL: the key is gone
			a.send(t, map[string]any{"type": "check", "id": 3, "key": "k", "token": r["token"], "deadline_ms": 2000})
			if c := a.reply(t, 3, 5*time.Second); c["type"] != "ok" || c["valid"] != tt.valid {
				t.Errorf("check past the TTL after a step back of 2×TTL: %v, want valid %v", c, tt.valid)
			}
			seen, ok, err := clockshim.Seen(off)
			if err != nil || ok != tt.valid || (ok && seen != -2*ttl) {
				t.Errorf("the shim's .seen file: %v, %v, %v; want the step seen (%v) only by the wall-clock mutant", seen, ok, err, -2*ttl)
			}
		})
	}
}
