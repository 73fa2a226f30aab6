package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/network"
	docker "github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/internal/proc"
)

// Ports inside the containers.
const (
	dockerRedisPort    = 6379
	dockerSentinelPort = 26379
	// dockerBusPort is a Redis Cluster node's cluster bus port (Redis's
	// default, port+10000): each container has its own IP, so no port is
	// shared.
	dockerBusPort = 16379
)

// dockerStopTimeout bounds the Docker calls of Kill, Stop and the sweep,
// which run without the caller's context (also after Ctrl-C).
const dockerStopTimeout = 20 * time.Second

// dockerReadyTimeout bounds the wait for a started container to answer
// PING: a container start takes ~0.3-1 s on a loaded machine.
const dockerReadyTimeout = 30 * time.Second

// dockerFeatures are the docker backend's features: no clock shim, and
// the containers cannot reach a proxy on this host's loopback.
func dockerFeatures(Options) []Feature {
	return []Feature{FeatureKill, FeaturePause, FeatureProxies, FeatureIsolate, FeatureRedisFaults}
}

// configureTestcontainers turns off testcontainers' reaper container (its
// image cannot be pulled where no registry is reachable; this backend
// removes what it makes itself: Cluster.Stop, plus the sweep of stale
// objects at start) and its default logger (it prints to stderr; the
// backend's progress goes to Options.Logf). testcontainers reads both once
// per process, so this runs before the first testcontainers call.
func configureTestcontainers() {
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	tclog.SetDefault(tclog.NewNoopLogger())
}

// dockerBackend runs each node as a container on a private bridge network
// with a fixed IP, which clients on this (Linux) host reach directly.
type dockerBackend struct {
	image string
	id    string // cluster id, in names and labels

	cli    *docker.Client
	net    *testcontainers.DockerNetwork
	subnet netip.Prefix
	// init is true when the image's PID 1 is lockbench-init: kill and
	// restart then act on redis-server inside the running container
	// (milliseconds) instead of stopping and starting the container
	// (seconds).
	init bool
}

// tcLogger sends testcontainers' progress lines to Options.Logf.
type tcLogger struct{ logf func(string, ...any) }

// Printf logs one testcontainers line.
func (l tcLogger) Printf(format string, args ...any) { l.logf("testcontainers: "+format, args...) }

// dockerNode is a node's container.
type dockerNode struct {
	ctr      *testcontainers.DockerContainer
	id       string
	ip       netip.Addr
	isolated bool
	initPid  int // host pid of lockbench-init, read at each container start
}

func newDockerBackend(o Options) *dockerBackend {
	img := o.Image
	if img == "" {
		img = dockerd.DefaultImage
	}
	return &dockerBackend{image: img, id: fmt.Sprintf("%x", rand.Uint64()&0xffffffffff)}
}

func (b *dockerBackend) name() string        { return BackendDocker }
func (b *dockerBackend) features() []Feature { return dockerFeatures(Options{}) }

// labels are the labels of every object of this cluster.
func (b *dockerBackend) labels() map[string]string { return dockerd.Labels(b.id) }

// prepare connects to Docker, sweeps stale objects of dead lockbench
// processes, checks the image is present (never pulls) and creates the
// cluster's network.
func (b *dockerBackend) prepare(ctx context.Context, c *Cluster) error {
	configureTestcontainers()
	cli, err := dockerd.Client(ctx)
	if err != nil {
		return err
	}
	b.cli = cli
	dockerd.Sweep(ctx, false)
	img, err := cli.ImageInspect(ctx, b.image)
	if err != nil {
		return dockerd.ImageMissing(b.image, err)
	}
	b.init = img.Config != nil && img.Config.Labels[dockerd.InitLabel] == "1"

	var lastErr error
	for range 8 {
		sub := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(rand.IntN(250) + 1), 0}), 24)
		gw := sub.Addr().Next()
		nw, err := tcnetwork.New(ctx,
			tcnetwork.WithDriver("bridge"),
			tcnetwork.WithLabels(b.labels()),
			tcnetwork.WithIPAM(&network.IPAM{Config: []network.IPAMConfig{{Subnet: sub, Gateway: gw}}}))
		if err == nil {
			b.net, b.subnet = nw, sub
			c.opts.Logf("cluster: docker network %s (%s) for %s", nw.Name, sub, c.topo)
			return nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("%w: cluster: create a Docker network: %v", ErrEnvironment, lastErr)
}

// firstLine shortens Docker's multi-line errors for one-line messages.
func firstLine(err error) string { return errs.FirstLine(err) }

// ip is node i's address: nodes n1.. get .10.., Sentinels s1.. get .100...
func (b *dockerBackend) ip(n *Node) netip.Addr {
	k, _ := strconv.Atoi(n.name[1:])
	base := byte(9)
	if n.sentinel {
		base = 99
	}
	a := b.subnet.Addr().As4()
	a[3] = base + byte(k)
	return netip.AddrFrom4(a)
}

// command is the container's command line.
func (b *dockerBackend) command(n *Node) []string {
	if n.sentinel {
		return []string{"redis-server", "/data/sentinel.conf", "--sentinel"}
	}
	args := []string{"redis-server",
		"--port", strconv.Itoa(dockerRedisPort),
		"--bind", "0.0.0.0",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--dir", "/data",
		"--loglevel", "warning",
		"--save", "",
		"--repl-diskless-sync-delay", "0",
		"--enable-debug-command", "yes",
	}
	if n.c.opts.Persistence == PersistenceAOF {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if n.replicaOf != nil {
		args = append(args, "--replicaof", b.ip(n.replicaOf).String(), strconv.Itoa(dockerRedisPort))
	}
	if n.c.topo.Kind == RedisCluster {
		// nodes.conf in the container's /data survives a kill and
		// restart (lockbench-init restarts the server in the same
		// container), so a restarted node rejoins with its identity. The
		// node announces its container IP on the bus, the address this
		// host and the other containers dial.
		args = append(args, clusterArgs("/data", dockerBusPort)...)
		args = append(args, "--cluster-announce-ip", b.ip(n).String())
	}
	return args
}

// start creates and starts the node's container on its first start, or
// starts the same container again after a kill, then waits until it
// answers PING.
func (b *dockerBackend) start(ctx context.Context, n *Node) error {
	if n.c.stopped() {
		return fmt.Errorf("cluster: start %s: cluster stopped", n.name)
	}
	ip := b.ip(n)
	port := dockerRedisPort
	if n.sentinel {
		port = dockerSentinelPort
	}
	n.mu.Lock()
	dn := n.ctr
	n.host, n.port, n.fixed = ip.String(), port, true
	n.mu.Unlock()
	if dn == nil {
		opts := []testcontainers.ContainerCustomizer{
			testcontainers.WithLogger(tcLogger{n.c.opts.Logf}),
			testcontainers.WithName(fmt.Sprintf("lockbench-%s-%s", b.id, n.name)),
			testcontainers.WithCmd(b.command(n)...),
			testcontainers.WithLabels(b.labels()),
			tcnetwork.WithNetwork([]string{n.name}, b.net),
			testcontainers.WithEndpointSettingsModifier(func(m map[string]*network.EndpointSettings) {
				if es := m[b.net.Name]; es != nil {
					es.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: ip}
				}
			}),
		}
		if n.sentinel {
			conf := sentinelConf(dockerSentinelPort, "0.0.0.0", "/data", "", b.ip(n.replicaOf).String(), dockerRedisPort)
			opts = append(opts, testcontainers.WithFiles(testcontainers.ContainerFile{
				Reader: strings.NewReader(conf), ContainerFilePath: "/data/sentinel.conf", FileMode: 0o666}))
		}
		ctr, err := testcontainers.Run(ctx, b.image, opts...)
		if ctr != nil {
			dn = &dockerNode{ctr: ctr, id: ctr.GetContainerID(), ip: ip}
			n.mu.Lock()
			n.ctr = dn
			n.mu.Unlock()
		}
		if err != nil {
			if ctx.Err() != nil { // Ctrl-C or a deadline, not the machine
				return fmt.Errorf("cluster: start container %s: %w", n.name, ctx.Err())
			}
			return fmt.Errorf("%w: cluster: start container %s (image %s): %v", ErrEnvironment, n.name, b.image, firstLine(err))
		}
	} else {
		sctx, cancel := context.WithTimeout(ctx, dockerStopTimeout)
		var err error
		n.mu.Lock()
		ip := dn.initPid
		n.mu.Unlock()
		switch {
		case b.init && ip > 0 && proc.Alive(ip) && syscall.Kill(ip, syscall.SIGUSR1) == nil:
			// lockbench-init is up and got the signal from this host
			// (faster than the Docker API): it starts redis-server again.
		case b.init && b.containerRunning(dn):
			_, err = b.cli.ContainerKill(sctx, dn.id, docker.ContainerKillOptions{Signal: "USR1"})
			ip = 0
		default:
			_, err = b.cli.ContainerStart(sctx, dn.id, docker.ContainerStartOptions{})
			ip = 0
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("cluster: restart container %s: %w", n.name, ctx.Err())
			}
			return fmt.Errorf("%w: cluster: restart container %s: %v", ErrEnvironment, n.name, firstLine(err))
		}
	}
	n.mu.Lock()
	known := dn.initPid
	n.mu.Unlock()
	if known == 0 || !proc.Alive(known) {
		if st, err := b.inspect(dn); err == nil {
			n.mu.Lock()
			dn.initPid = st.Pid
			n.mu.Unlock()
		}
	}
	info, err := b.waitReady(ctx, n, dn)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.version = info["redis_version"]
	n.everStarted = true
	n.mu.Unlock()
	n.c.opts.Logf("cluster: started %s as container %.12s at %s", n.name, dn.id, n.Addr())
	return nil
}

// waitReady polls the container's server with a raw PING + INFO until it
// answers, the container exits, dockerReadyTimeout passes or ctx ends.
func (b *dockerBackend) waitReady(ctx context.Context, n *Node, dn *dockerNode) (map[string]string, error) {
	addr := n.Addr()
	deadline := time.Now().Add(dockerReadyTimeout)
	var lastErr error
	for i := 0; ; i++ {
		info, err := rawInfo(ctx, addr, 200*time.Millisecond, security.Security{})
		if err == nil {
			return info, nil
		}
		lastErr = err
		if i%100 == 99 { // every ~0.5 s: has it died?
			if st, ierr := b.inspect(dn); ierr == nil && !st.Running {
				return nil, fmt.Errorf("%w: cluster: container %s exited at start (code %d): %s", ErrEnvironment, n.name, st.ExitCode, b.logTail(dn))
			}
			// lockbench-init running without a server: ask it again (a
			// signal that met a child not yet reaped starts nothing).
			if b.init && b.pid(n) == 0 {
				n.mu.Lock()
				ip := dn.initPid
				n.mu.Unlock()
				if ip > 0 && proc.Alive(ip) {
					_ = syscall.Kill(ip, syscall.SIGUSR1)
				}
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster: start %s: %w (last: %v); %s", n.name, ctx.Err(), lastErr, b.logTail(dn))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: cluster: container %s did not answer PING at %s within %v (last: %v); %s", ErrEnvironment, n.name, addr, dockerReadyTimeout, lastErr, b.logTail(dn))
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-n.c.stopCh:
			return nil, fmt.Errorf("cluster: start %s: cluster stopped", n.name)
		case <-ctx.Done(): // the check above returns, with the log tail
		}
	}
}

// containerRunning reports whether Docker reports the container running.
func (b *dockerBackend) containerRunning(dn *dockerNode) bool {
	st, err := b.inspect(dn)
	return err == nil && st.Running
}

// containerState is what lockbench needs of Docker's container state.
type containerState struct {
	Running, Paused bool
	Pid, ExitCode   int
}

// inspect returns the container's state.
func (b *dockerBackend) inspect(dn *dockerNode) (containerState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerStopTimeout)
	defer cancel()
	r, err := b.cli.ContainerInspect(ctx, dn.id, docker.ContainerInspectOptions{})
	if err != nil {
		return containerState{}, err
	}
	st := r.Container.State
	if st == nil {
		return containerState{}, errors.New("no state in inspect")
	}
	return containerState{Running: st.Running, Paused: st.Paused, Pid: st.Pid, ExitCode: st.ExitCode}, nil
}

// logTail returns the container's last log lines, for error messages.
func (b *dockerBackend) logTail(dn *dockerNode) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := dn.ctr.Logs(ctx)
	if err != nil {
		return "no log output (" + firstLine(err) + ")"
	}
	defer rc.Close()
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		k, err := rc.Read(buf)
		sb.Write(buf[:k])
		if err != nil {
			break
		}
	}
	s := strings.TrimSpace(sb.String())
	if len(s) > 800 {
		s = s[len(s)-800:]
	}
	if s == "" {
		return "no log output"
	}
	return "container log: " + s
}

// DockerLabel returns the Docker label ("key=value") of the cluster's
// containers and network on the docker backend, "" on the others.
func (c *Cluster) DockerLabel() string {
	if b, ok := c.be.(*dockerBackend); ok {
		return dockerd.LabelCluster + "=" + b.id
	}
	return ""
}

// dockerNode returns n's container, or nil before its first start.
func (n *Node) dockerNode() *dockerNode {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ctr
}

// kill SIGKILLs redis-server and waits until it is gone. With
// lockbench-init as PID 1 it asks init (docker kill --signal USR2), which
// SIGKILLs and reaps the server while the container, its address and its
// network stay; otherwise it SIGKILLs the container (docker kill). A paused
// container is thawed first: a frozen server cannot die.
func (b *dockerBackend) kill(n *Node) error {
	dn := n.dockerNode()
	if dn == nil {
		return nil
	}
	pid := b.pid(n)
	if pid == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerStopTimeout)
	defer cancel()
	sig, how := "KILL", "docker kill"
	sent := false
	if b.init {
		sig, how = "USR2", "SIGKILL, reaped by lockbench-init"
		if st, err := b.inspect(dn); err == nil && st.Paused {
			if _, err := b.cli.ContainerUnpause(ctx, dn.id, docker.ContainerUnpauseOptions{}); err != nil {
				return fmt.Errorf("cluster: kill %s: unpause: %v", n.name, firstLine(err))
			}
		}
		// The server's host pid is known: SIGKILL it from here (init
		// reaps it); the Docker API is the fallback.
		sent = syscall.Kill(pid, syscall.SIGKILL) == nil
	}
	if !sent {
		if _, err := b.cli.ContainerKill(ctx, dn.id, docker.ContainerKillOptions{Signal: sig}); err != nil {
			return fmt.Errorf("cluster: kill %s: %v", n.name, firstLine(err))
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.pid(n) != 0 || proc.Alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: kill %s: redis-server (pid %d) still running 10s after %s", n.name, pid, how)
		}
		time.Sleep(2 * time.Millisecond)
	}
	n.c.opts.Logf("cluster: killed %s (pid %d, %s)", n.name, pid, how)
	return nil
}

// pause freezes the container (docker pause: cgroup freezer).
func (b *dockerBackend) pause(n *Node) error {
	dn := n.dockerNode()
	if dn == nil || !b.running(n) {
		return fmt.Errorf("cluster: pause %s: node not running", n.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerStopTimeout)
	defer cancel()
	if _, err := b.cli.ContainerPause(ctx, dn.id, docker.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("cluster: pause %s: %v", n.name, firstLine(err))
	}
	n.c.opts.Logf("cluster: paused %s (docker pause)", n.name)
	return nil
}

// resume thaws the container (docker unpause).
func (b *dockerBackend) resume(n *Node) error {
	dn := n.dockerNode()
	if dn == nil {
		return fmt.Errorf("cluster: resume %s: node not running", n.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerStopTimeout)
	defer cancel()
	if _, err := b.cli.ContainerUnpause(ctx, dn.id, docker.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("cluster: resume %s: %v", n.name, firstLine(err))
	}
	n.c.opts.Logf("cluster: resumed %s (docker unpause)", n.name)
	return nil
}

// state returns "T" for a paused container, else the state of its main
// process in /proc ("R" when /proc does not show it: a remote daemon).
func (b *dockerBackend) state(n *Node) (string, error) {
	dn := n.dockerNode()
	if dn == nil {
		return "", fmt.Errorf("cluster: state of %s: node not running", n.name)
	}
	st, err := b.inspect(dn)
	if err != nil {
		return "", fmt.Errorf("cluster: state of %s: %v", n.name, firstLine(err))
	}
	switch {
	case !st.Running:
		return "", fmt.Errorf("cluster: state of %s: node not running", n.name)
	case st.Paused:
		return "T", nil
	}
	pid := b.pid(n)
	if pid == 0 {
		return "", fmt.Errorf("cluster: state of %s: node not running", n.name)
	}
	if s, err := proc.State(pid); err == nil {
		return s, nil
	}
	return "R", nil
}

// pid is redis-server's pid on this host: the container's main process,
// or with lockbench-init its child (0 while init runs without one).
func (b *dockerBackend) pid(n *Node) int {
	dn := n.dockerNode()
	if dn == nil {
		return 0
	}
	n.mu.Lock()
	ip := dn.initPid
	n.mu.Unlock()
	if b.init && ip > 0 && proc.Alive(ip) {
		// Fast path (no Docker API call): init is alive, read its child.
		if kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", ip, ip)); err == nil {
			return childPid(kids)
		}
	}
	st, err := b.inspect(dn)
	if err != nil || !st.Running {
		return 0
	}
	if !b.init {
		return st.Pid
	}
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", st.Pid, st.Pid))
	if err != nil {
		return st.Pid // a remote daemon: no /proc view, count the container
	}
	return childPid(kids)
}

// childPid returns the first live pid of a /proc children list, 0 if none.
func childPid(kids []byte) int {
	for _, f := range strings.Fields(string(kids)) {
		if p, err := strconv.Atoi(f); err == nil && proc.Alive(p) {
			return p
		}
	}
	return 0
}

func (b *dockerBackend) running(n *Node) bool { return b.pid(n) != 0 }

func (b *dockerBackend) setClockOffset(*Node, time.Duration) error {
	return unsupported(b, "set a node's clock (the LD_PRELOAD clock shim runs on the process backend only)")
}

// isolate disconnects the container from the cluster's network (on) or
// connects it again with the same IP and alias (off).
func (b *dockerBackend) isolate(ctx context.Context, n *Node, on bool) error {
	dn := n.dockerNode()
	if dn == nil {
		return fmt.Errorf("cluster: isolate %s: node not started", n.name)
	}
	n.mu.Lock()
	same := dn.isolated == on
	n.mu.Unlock()
	if same {
		return nil
	}
	if on {
		if _, err := b.cli.NetworkDisconnect(ctx, b.net.ID, docker.NetworkDisconnectOptions{Container: dn.id, Force: true}); err != nil {
			return fmt.Errorf("cluster: isolate %s: docker network disconnect: %v", n.name, firstLine(err))
		}
	} else {
		es := &network.EndpointSettings{IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: dn.ip}, Aliases: []string{n.name}}
		if _, err := b.cli.NetworkConnect(ctx, b.net.ID, docker.NetworkConnectOptions{Container: dn.id, EndpointConfig: es}); err != nil {
			return fmt.Errorf("cluster: reconnect %s: docker network connect: %v", n.name, firstLine(err))
		}
	}
	n.mu.Lock()
	dn.isolated = on
	n.mu.Unlock()
	n.c.opts.Logf("cluster: %s isolated: %v", n.name, on)
	return nil
}

// close removes the cluster's containers (with their anonymous volumes)
// and its network. It uses its own timeout, not a caller's context, so it
// also runs after Ctrl-C.
func (b *dockerBackend) close() error {
	if b.cli == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerStopTimeout)
	defer cancel()
	err := dockerd.Remove(ctx, b.cli, dockerd.LabelCluster+"="+b.id)
	return errors.Join(err, b.cli.Close())
}

// sentinelConf is a Sentinel configuration monitoring the primary at
// host:port under DefaultMasterName, with lockbench's timings. logfile ""
// logs to stdout.
func sentinelConf(port int, bind, dir, logfile, host string, primaryPort int) string {
	m := DefaultMasterName
	text := fmt.Sprintf("port %d\nbind %s\nprotected-mode no\ndaemonize no\ndir %q\nlogfile %q\nloglevel warning\n", port, bind, dir, logfile) +
		fmt.Sprintf("sentinel monitor %s %s %d %d\n", m, host, primaryPort, SentinelQuorum) +
		fmt.Sprintf("sentinel down-after-milliseconds %s %d\n", m, SentinelDownAfterMilliseconds) +
		fmt.Sprintf("sentinel failover-timeout %s %d\n", m, SentinelFailoverTimeout) +
		fmt.Sprintf("sentinel parallel-syncs %s 1\n", m)
	return text
}

// hostPort splits "host:port" into its parts with a numeric port.
func hostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return h, port, nil
}
