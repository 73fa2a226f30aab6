package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/proc"
)

// Node is one process of a Cluster: a redis-server (n1, n2, ...), a
// Sentinel (s1, s2, s3), or an etcd member or ZooKeeper server (n1, n2,
// ...). Its address stays the same across restarts. All
// methods are safe for concurrent use; fault methods on one node run one at
// a time.
type Node struct {
	c         *Cluster
	name      string
	sentinel  bool
	dir       string
	replicaOf *Node   // initial primary of a replica, nil otherwise
	member    *member // etcd member or ZooKeeper server, nil for Redis

	op sync.Mutex // serialises Kill, Restart, Pause, Resume, SetClockOffset

	mu          sync.Mutex // guards the fields below
	host        string     // address host clients dial: 127.0.0.1, or a container IP
	port        int
	busPort     int         // Redis Cluster: the cluster bus port (--cluster-port), 0 until picked
	fixed       bool        // port must not change (fixed by the caller, or started once)
	everStarted bool        // the node started successfully at least once
	proc        *process    // process backend: the running process
	ctr         *dockerNode // docker backend: the container
	version     string
	logFrom     [2]int64      // sizes of server.log and stdout.log when the last start began
	tlsClient   *redis.Client // with TLS: do's client, kept (see Node.client)
}

// process is one running OS process of a node.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and been reaped
}

// errPortInUse means the server exited at start because its port was taken.
var errPortInUse = errors.New("port in use")

// newNode creates the node's folder, emptied first so that no data, AOF or
// Sentinel state of an earlier run in the same Dir leaks into this one; the
// process starts later.
func (c *Cluster) newNode(name string, sentinel bool, port int) (*Node, error) {
	dir := filepath.Join(c.dir, name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("cluster: empty node dir: %w", err)
	}
	mode := os.FileMode(0o755)
	if sentinel && c.sentinelLink != "" {
		mode = 0o700 // sentinel.conf holds the link password during the run
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return nil, fmt.Errorf("cluster: make node dir: %w", err)
	}
	n := &Node{c: c, name: name, sentinel: sentinel, dir: dir, host: "127.0.0.1", port: port, fixed: port != 0}
	if !sentinel && c.opts.ClockShim != "" && !c.topo.Kind.Consensus() {
		if err := n.writeOffset(0); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Name returns "n1", "n2", ... for redis-servers and "s1", "s2", "s3" for
// Sentinels.
func (n *Node) Name() string { return n.name }

// Addr returns the "HOST:PORT" clients dial: "127.0.0.1:PORT" on the
// process backend, the container's IP on its private network and the
// server's port (6379, Sentinels 26379) on docker, the given address on
// external. It is stable across Kill and Restart.
func (n *Node) Addr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return net.JoinHostPort(n.host, strconv.Itoa(n.port))
}

// Host returns the host part of Addr.
func (n *Node) Host() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.host
}

// Port returns the node's TCP port.
func (n *Node) Port() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.port
}

// Security returns the AUTH and TLS a client of the node must use (the
// cluster's, see Cluster.Security).
func (n *Node) Security() security.Security { return n.c.opts.Security }

// Dir returns the node's own folder (data, AOF, log, clock offset file;
// an etcd member's or ZooKeeper server's data in its "data" subfolder).
func (n *Node) Dir() string { return n.dir }

// LogFile returns the path of the server's log (loglevel warning).
func (n *Node) LogFile() string { return filepath.Join(n.dir, "server.log") }

// Kind returns the kind of server the node runs: Etcd, ZooKeeper, or ""
// for a redis-server or Sentinel.
func (n *Node) Kind() Kind {
	if n.member == nil {
		return ""
	}
	return n.member.kind
}

// IsSentinel reports whether the node is a Sentinel process.
func (n *Node) IsSentinel() bool { return n.sentinel }

// PID returns the process id on this host (docker: the container's main
// process as the host sees it), or 0 when the node is not running (killed,
// or exited by itself) or the backend has no process here (external).
func (n *Node) PID() int { return n.c.be.pid(n) }

// Running reports whether the node is up (possibly paused). On the external
// backend it is always true: lockbench never stops those servers.
func (n *Node) Running() bool { return n.c.be.running(n) }

// processPID is PID on the process backend.
func (n *Node) processPID() int {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited reports whether the process has been reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill stops the node at once and waits until it is gone: process backend
// SIGKILL to its process group (and the reap); docker: docker kill (SIGKILL)
// of the container, which is kept for Restart. Killing a node that is not
// running is a no-op. It returns an error if the process survives 10 s
// after SIGKILL, and one wrapping ErrUnsupported on the external backend.
func (n *Node) Kill() error {
	n.op.Lock()
	defer n.op.Unlock()
	return n.c.be.kill(n)
}

// killProcess is Kill on the process backend, without the op lock.
func (n *Node) killProcess() error {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return nil
	}
	// The handle is dropped only after the reap, so Running() turns false
	// once the pid is really gone.
	err := p.kill()
	n.mu.Lock()
	n.proc = nil
	n.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cluster: kill %s: %w", n.name, err)
	}
	n.c.opts.Logf("cluster: killed %s (pid %d)", n.name, p.cmd.Process.Pid)
	return nil
}

// kill SIGKILLs the process group and the process, then waits for the reap.
func (p *process) kill() error {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("pid %d still alive 10s after SIGKILL", pid)
	}
}

// Restart kills the node if it is running, waits delay (0 = none), and
// starts it again on the same address with the same configuration (docker:
// the same container), then waits until it answers PING (at most
// ReadyTimeout). With PersistenceNone the
// restarted node is empty; with PersistenceAOF it reloads its keys. A
// replica restarts as a replica of its initial primary; a Sentinel keeps the
// configuration it rewrote. If the port was taken meanwhile the error wraps
// ErrEnvironment and names the port. ctx bounds the delay and the start.
func (n *Node) Restart(ctx context.Context, delay time.Duration) error {
	n.op.Lock()
	defer n.op.Unlock()
	if err := n.c.be.kill(n); err != nil {
		return err
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("cluster: restart %s: %w", n.name, ctx.Err())
		case <-n.c.stopCh:
			return fmt.Errorf("cluster: restart %s: cluster stopped", n.name)
		}
	}
	return n.c.be.start(ctx, n)
}

// Pause freezes the node: process backend SIGSTOP to its process group,
// waiting (at most 1 s) until /proc reports state "T"; docker: docker pause
// (cgroup freezer), waiting until Docker reports the container paused.
// Clients on open connections then time out; new TCP connects still
// succeed (kernel backlog) and their commands run after Resume. TTLs keep
// running in wall time while paused. External: an error wrapping
// ErrUnsupported (use PauseFor).
func (n *Node) Pause() error {
	n.op.Lock()
	defer n.op.Unlock()
	return n.c.be.pause(n)
}

// Resume undoes Pause: SIGCONT (waiting until /proc no longer reports "T"),
// or docker unpause.
func (n *Node) Resume() error {
	n.op.Lock()
	defer n.op.Unlock()
	return n.c.be.resume(n)
}

// Isolate cuts the node off its network when on is true (docker network
// disconnect: every client, replica and Sentinel loses it; packets to its
// address go nowhere, so clients time out) and reconnects it with the same
// address when on is false. Docker only; other backends return an error
// wrapping ErrUnsupported. ctx bounds the Docker calls.
func (n *Node) Isolate(ctx context.Context, on bool) error {
	n.op.Lock()
	defer n.op.Unlock()
	return n.c.be.isolate(ctx, n, on)
}

// signal sends sig to the process group, then polls ProcState until done
// accepts the state.
func (n *Node) signal(sig syscall.Signal, done func(state string) bool) error {
	pid := n.PID()
	if pid == 0 {
		return fmt.Errorf("cluster: %s %s: node not running", sig, n.name)
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		return fmt.Errorf("cluster: %s %s: %w", sig, n.name, err)
	}
	deadline := time.Now().Add(time.Second)
	for {
		s, err := proc.State(pid)
		if err != nil {
			return fmt.Errorf("cluster: %s %s: %w", sig, n.name, err)
		}
		if done(s) {
			n.c.opts.Logf("cluster: %s %s (pid %d): state %s", sig, n.name, pid, s)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: %s %s: state still %q after 1s", sig, n.name, s)
		}
		time.Sleep(time.Millisecond)
	}
}

// ProcState returns the one-letter process state from /proc/PID/stat:
// "S" sleeping, "R" running, "T" stopped (paused), "Z" zombie, ... On
// docker a paused (frozen) container reports "T" as well, whatever /proc
// says. It returns an error when the node is not running, and one wrapping
// ErrUnsupported on the external backend.
func (n *Node) ProcState() (string, error) { return n.c.be.state(n) }

// processState is ProcState on the process backend.
func (n *Node) processState() (string, error) {
	pid := n.PID()
	if pid == 0 {
		return "", fmt.Errorf("cluster: state of %s: node not running", n.name)
	}
	s, err := proc.State(pid)
	if err != nil {
		return "", fmt.Errorf("cluster: state of %s: %w", n.name, err)
	}
	return s, nil
}

// command builds the command line of the node's server for port, and the
// configuration it reads on its standard input ("" for none): the
// password lines, which never go on a command line.
func (n *Node) command(port int) (bin string, args []string, stdin string, err error) {
	o := &n.c.opts
	if n.sentinel {
		return n.sentinelCommand(port)
	}
	if n.member != nil {
		bin, args, err = n.memberCommand(port)
		return bin, args, "", err
	}
	args = []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--dir", n.dir,
		"--logfile", n.LogFile(),
		"--loglevel", "warning",
		"--save", "",
		"--repl-diskless-sync-delay", "0",
		"--enable-debug-command", "yes",
	}
	if o.Persistence == PersistenceAOF {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if n.replicaOf != nil {
		args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(n.replicaOf.Port()))
	}
	if n.c.topo.Kind == RedisCluster {
		bus, err := n.clusterBusPort()
		if err != nil {
			return "", nil, "", err
		}
		args = append(args, clusterArgs(n.dir, bus)...)
	}
	// Later arguments win: TLS replaces --port with --port 0 --tls-port.
	args = append(args, o.Security.ServerTLSArgs(port, n.c.topo.Kind == RedisCluster)...)
	if conf := o.Security.ServerAuthConfig(); conf != "" {
		stdin = conf + n.c.sentinelLinkUser()
		args = append(args, "-") // the password comes on stdin (startOn)
	}
	return o.RedisServer, args, stdin, nil
}

// startProcess launches the process and waits until it answers PING. A
// node whose port is not fixed yet gets a free port, retried on a fresh one
// when the port was taken between picking and binding.
func (n *Node) startProcess(ctx context.Context) error {
	n.mu.Lock()
	port, fixed := n.port, n.fixed
	n.mu.Unlock()
	for attempt := 1; ; attempt++ {
		if !fixed {
			p, err := freePort()
			if err != nil {
				return err
			}
			port = p
		}
		err := n.startOn(ctx, port)
		if err == nil {
			n.mu.Lock()
			n.port, n.fixed, n.everStarted = port, true, true
			n.mu.Unlock()
			return nil
		}
		if !errors.Is(err, errPortInUse) {
			return err
		}
		if fixed {
			return fmt.Errorf("%w: cluster: start %s: port %d is in use by another process", ErrEnvironment, n.name, port)
		}
		n.mu.Lock()
		n.busPort = 0 // the bus port may be the one taken: pick both afresh
		n.mu.Unlock()
		if attempt == startAttempts {
			return fmt.Errorf("%w: cluster: start %s: %d free ports were taken before redis bound them", ErrEnvironment, n.name, attempt)
		}
		n.c.opts.Logf("cluster: %s: port %d taken at start, retrying on another", n.name, port)
	}
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; start retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("%w: cluster: pick a free port: %v", ErrEnvironment, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startOn starts the process on port and waits for readiness. It returns
// an error wrapping errPortInUse when the port is taken.
func (n *Node) startOn(ctx context.Context, port int) error {
	if n.c.stopped() {
		return fmt.Errorf("cluster: start %s: cluster stopped", n.name)
	}
	bin, args, stdin, err := n.command(port)
	if err != nil {
		return err
	}
	// A port already answering is taken: the server would fail to bind it.
	ports := []int{port}
	if n.member != nil {
		ports = append(ports, n.member.ports()...)
	}
	for _, p := range ports {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), 200*time.Millisecond); err == nil {
			conn.Close()
			return errPortInUse
		}
	}
	n.markLogs()
	out, err := os.OpenFile(filepath.Join(n.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: start %s: %w", n.name, err)
	}
	defer out.Close() // the child keeps its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Dir = n.dir
	cmd.Stdout, cmd.Stderr = out, out
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.Env = os.Environ()
	if n.shimmed() {
		cmd.Env = append(cmd.Env, "LD_PRELOAD="+n.c.opts.ClockShim, clockEnv+"="+n.offsetFile())
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: cluster: start %s: %v", ErrEnvironment, n.name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
	fail := func(err error) error {
		n.mu.Lock()
		if n.proc == p {
			n.proc = nil
		}
		n.mu.Unlock()
		_ = p.kill()
		return err
	}
	info, err := n.waitReady(ctx, p, port)
	if err != nil {
		return fail(err)
	}
	if n.shimmed() {
		if err := checkPreloaded(cmd.Process.Pid, n.c.opts.ClockShim); err != nil {
			return fail(fmt.Errorf("%w: cluster: %s: %v; %s", ErrEnvironment, n.name, err, n.logTail()))
		}
	}
	n.mu.Lock()
	n.version = info["redis_version"]
	n.mu.Unlock()
	n.c.opts.Logf("cluster: started %s on port %d (pid %d)", n.name, port, cmd.Process.Pid)
	return nil
}

// shimmed reports whether the node's server runs with the clock shim: a
// redis-server (not a Sentinel, etcd or ZooKeeper) when Options.ClockShim
// is set.
func (n *Node) shimmed() bool {
	return !n.sentinel && n.member == nil && n.c.opts.ClockShim != ""
}

// readyPoll is the wait before PING number n+1 of waitReady: 1 ms for the
// first 20 (an idle machine starts redis-server in ~10 ms, so a tight poll
// saves a few ms per start), then 5 ms (a loaded machine can take hundreds
// of ms, and each poll is a TCP connect competing with the start).
func readyPoll(n int) time.Duration {
	if n <= 20 {
		return time.Millisecond
	}
	return 5 * time.Millisecond
}

// waitReady polls the server with a raw PING (and INFO server, to check the
// answer comes from our pid) every readyPoll until it answers, the process exits,
// ReadyTimeout passes, ctx ends or the cluster stops. An etcd member or
// ZooKeeper server is polled with memberUp instead, for at most
// ConsensusReadyTimeout; its info holds only redis_version = "" then.
func (n *Node) waitReady(ctx context.Context, p *process, port int) (map[string]string, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	timeout := ReadyTimeout
	if n.member != nil {
		timeout = ConsensusReadyTimeout
	}
	deadline := time.Now().Add(timeout)
	pid := strconv.Itoa(p.cmd.Process.Pid)
	var lastErr error
	polls := 0
	for {
		if p.exited() {
			tail := n.logTail()
			if strings.Contains(strings.ToLower(tail), "address already in use") {
				return nil, fmt.Errorf("cluster: start %s: %w", n.name, errPortInUse)
			}
			return nil, fmt.Errorf("%w: cluster: %s exited at start: %s", ErrEnvironment, n.name, tail)
		}
		var info map[string]string
		var err error
		if n.member != nil {
			if _, err = n.memberUp(ctx, addr, 200*time.Millisecond); err == nil {
				return map[string]string{}, nil
			}
		} else if info, err = rawInfo(ctx, addr, 200*time.Millisecond, n.c.opts.Security); err == nil {
			if info["process_id"] == pid {
				return info, nil
			}
			err = errNotOurs
		}
		lastErr = err
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster: start %s: %w", n.name, ctx.Err())
		}
		if time.Now().After(deadline) {
			if errors.Is(lastErr, errNotOurs) {
				return nil, fmt.Errorf("cluster: start %s: %w", n.name, errPortInUse)
			}
			return nil, fmt.Errorf("%w: cluster: %s did not answer within %v (last: %v); %s", ErrEnvironment, n.name, timeout, lastErr, n.logTail())
		}
		polls++
		select {
		case <-time.After(readyPoll(polls)):
		case <-p.done:
		case <-n.c.stopCh:
			return nil, fmt.Errorf("cluster: start %s: cluster stopped", n.name)
		case <-ctx.Done():
			return nil, fmt.Errorf("cluster: start %s: %w", n.name, ctx.Err())
		}
	}
}

// logFiles are the files logTail quotes.
func (n *Node) logFiles() [2]string {
	return [2]string{n.LogFile(), filepath.Join(n.dir, "stdout.log")}
}

// markLogs remembers the current log sizes so that logTail quotes only what
// the next start writes.
func (n *Node) markLogs() {
	var sizes [2]int64
	for i, f := range n.logFiles() {
		if st, err := os.Stat(f); err == nil {
			sizes[i] = st.Size()
		}
	}
	n.mu.Lock()
	n.logFrom = sizes
	n.mu.Unlock()
}

// logTail returns the last lines the latest start wrote to the node's log
// and stdout, for error messages.
func (n *Node) logTail() string {
	n.mu.Lock()
	from := n.logFrom
	n.mu.Unlock()
	var parts []string
	for i, f := range n.logFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if int64(len(b)) >= from[i] {
			b = b[from[i]:]
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		if len(b) > 800 {
			b = b[len(b)-800:]
		}
		parts = append(parts, fmt.Sprintf("%s: %s", filepath.Base(f), strings.TrimSpace(string(b))))
	}
	if len(parts) == 0 {
		return "no log output"
	}
	return strings.Join(parts, " | ")
}
