// Package cluster starts Redis topologies for lockbench on one of three
// backends (Options.Backend): process (the default: redis-server and
// redis-sentinel processes that this harness starts on free loopback ports,
// each in its own folder, and kills when it stops), docker (each server a
// container on a private Docker network, through testcontainers-go; see
// docker.go) and external (an existing deployment; faults only through
// Redis commands; see external.go). Node handles inject real server-side faults (SIGKILL, restart with or
// without AOF, SIGSTOP/SIGCONT, a wall-clock offset through an LD_PRELOAD
// shim, replica promotion, held-back replication); a proxy.Proxy puts an
// embedded toxiproxy between a client and a node for partitions and latency.
//
// On docker (docker.go) every server is a container with a fixed IP on a
// private bridge network made per cluster, which clients on this Linux host
// dial directly; containers and network carry dockerd's labels
// (dockerd.Labels), Stop removes them, and every docker Start first sweeps
// what a dead lockbench left (dockerd.Sweep). Ryuk is disabled. The local
// image (dockerd.BuildImage, make docker-image) runs lockbench-init as PID 1 so
// that Kill and Restart act on redis-server inside the running container.
//
// Life cycle: Start builds a Topology and waits until every server answers
// PING (and, for replicated topologies, until replicas are in sync and the
// Sentinels know each other); Cluster.Stop kills everything. Processes are
// started with Pdeathsig=SIGKILL and in their own process group, so they die
// with lockbench even when it crashes or panics. Pdeathsig fires when the OS
// thread that started the child exits; the Go runtime only retires threads
// whose goroutine called runtime.LockOSThread and exited locked, which this
// package never does. lockbench's cmd additionally installs a SIGINT/SIGTERM
// handler that calls Cluster.Stop, so an interrupted run also removes its
// temporary folders.
//
// Every error caused by the machine rather than by the caller (no
// redis-server, a port in use, the clock shim missing or not loaded, a node
// not answering PING in time) wraps ErrEnvironment; lockbench maps it to exit
// code 3.
//
// A backend that cannot do a Node operation returns an error wrapping
// ErrUnsupported; BackendFeatures and Cluster.Supports tell in advance.
//
// The measured facts behind the choices here (flags, timeouts, which faults
// lose a write) are noted beside each choice (see replicated.go, process.go).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/internal/proc"
)

// ErrEnvironment is wrapped by every error caused by the machine rather than
// by the caller: redis-server or redis-sentinel not installed, a port in use,
// the clock shim missing or not loadable, gcc missing, a node not answering
// PING before its deadline. Test with errors.Is. It is errs.ErrEnvironment,
// which the packages below cluster (security, clockshim, proxy, dockerd)
// wrap. Its text carries no "cluster:" prefix: the messages that wrap it
// name the package once.
var ErrEnvironment = errs.ErrEnvironment

// CheckRedisServer returns nil when the process backend can start
// redis-server: o.RedisServer, or redis-server on PATH when that is empty.
// Other backends need none (nil). The error wraps ErrEnvironment and names
// the fix. Commands call it before anything starts, so a missing
// redis-server leaves an earlier run's results in place.
func CheckRedisServer(o Options) error {
	if o.Backend != "" && o.Backend != BackendProcess {
		return nil
	}
	_, err := redisServerPath(o.RedisServer)
	return err
}

// redisServerPath returns the redis-server to run: bin when given and
// usable, else redis-server found on PATH; errors wrap ErrEnvironment.
func redisServerPath(bin string) (string, error) {
	if bin == "" {
		p, err := exec.LookPath("redis-server")
		if err != nil {
			return "", fmt.Errorf("%w: redis-server not found on PATH; %s", ErrEnvironment, installHint)
		}
		return p, nil
	}
	if _, err := exec.LookPath(bin); err != nil {
		return "", fmt.Errorf("%w: redis-server %q not usable (%v); %s", ErrEnvironment, bin, err, installHint)
	}
	return bin, nil
}

// installHint is the one-line fix printed when redis-server is missing.
const installHint = "install it: apt-get install redis-server (or run make bench, which installs it)"

// Persistence selects how a redis-server keeps its data across a restart.
type Persistence string

const (
	// PersistenceNone (the default) keeps nothing: --save "" --appendonly no.
	// A restarted node comes back empty.
	PersistenceNone Persistence = "none"
	// PersistenceAOF logs every write before replying: --appendonly yes
	// --appendfsync always. A restarted node reloads its keys (with their
	// absolute expiry times).
	PersistenceAOF Persistence = "aof"
)

// DefaultMasterName is the name Sentinels monitor the primary under.
const DefaultMasterName = "lockbench"

// Default timings.
const (
	// ReadyTimeout bounds the wait for a started server to answer PING.
	ReadyTimeout = 5 * time.Second
	// startAttempts is how often a node is started on a fresh free port
	// when the previous one was taken between picking and binding it.
	startAttempts = 5
)

// Options configures Start. The zero value is valid: binaries from PATH,
// a fresh temporary folder, no persistence, no clock shim, silent.
type Options struct {
	// Backend is BackendProcess (default, also ""), BackendDocker or
	// BackendExternal; resolve BackendAuto with ResolveBackend first.
	Backend string
	// Image is the Docker image of the docker backend's servers and
	// Sentinels; it must be on the machine (lockbench never pulls).
	// Default dockerd.DefaultImage. Other backends ignore it.
	Image string
	// External is the deployment the external backend uses.
	External External
	// RedisServer is the path of the redis-server binary.
	// Default: "redis-server" looked up on PATH.
	RedisServer string
	// Etcd is the path of the etcd server binary (Etcd topologies).
	// Default: etcd beside the running executable (make etcd builds
	// bin/etcd beside bin/lockbench), then bin/etcd of the lockbench
	// checkout the working directory is in, then etcd on PATH.
	Etcd string
	// Java is the java binary that runs ZooKeeper (ZooKeeper topologies).
	// Default: java on PATH.
	Java string
	// ZooKeeperClasspath is the ZooKeeper server's class path. Default:
	// Debian's /usr/share/java/zookeeper.jar (apt-get install
	// libzookeeper-java),
	// with /usr/share/java/slf4j-simple.jar for its log when present.
	ZooKeeperClasspath string
	// RedisSentinel is the path of the redis-sentinel binary, used only by
	// topologies with Sentinels. Default: "redis-sentinel" on PATH, else
	// RedisServer with --sentinel.
	RedisSentinel string
	// Dir is the parent folder of the per-node folders (n1, n2, ..., s1, ...).
	// Default: a fresh os.MkdirTemp folder, removed by Stop. A Dir given
	// here is kept by Stop, but Start empties the node folders in it, so
	// a run never loads data or Sentinel state left by an earlier one.
	Dir string
	// Persistence is PersistenceNone (default, also for "") or PersistenceAOF.
	// Sentinels ignore it, and so do etcd and ZooKeeper, which always keep
	// their data across a restart.
	Persistence Persistence
	// ClockShim is the path of the clock-offset LD_PRELOAD library built by
	// clockshim.Build (process backend only; the others ignore it). Default
	// "": servers start without it and Node.SetClockOffset returns an error. Sentinels never get the shim.
	ClockShim string
	// Ports fixes the TCP ports of Nodes() in order, then of Sentinels()
	// (process backend only: containers listen on 6379 and 26379 at their
	// own IP; etcd and ZooKeeper members always get free ports).
	// A missing or 0 entry means a free port picked at start. A fixed port
	// that is in use makes Start fail with an error wrapping ErrEnvironment
	// that names the port.
	Ports []int
	// Security is the AUTH and TLS of every connection to a Redis server
	// or etcd member (see Security). On the process backend the servers
	// are started to require it (a redis-server gets the password on its
	// standard input; etcd gets its users through its Auth API once its
	// members agree on a leader; TLS on certificates Start generates in
	// Dir: leave the TLS files empty); on the external backend it is what
	// your servers require (a Redis Cluster's nodes included). The docker
	// backend refuses it, and so do Sentinel topologies on the process
	// backend, for now.
	Security security.Security
	// Logf receives progress lines (process starts, kills, failovers).
	// Default nil: silent.
	Logf func(format string, args ...any)
}

// Cluster is a running topology. All methods are safe for concurrent use.
type Cluster struct {
	topo      Topology
	opts      Options
	be        backend
	dir       string
	ownDir    bool
	nodes     []*Node
	sentinels []*Node
	version   string
	token     string // etcd's --initial-cluster-token
	// sentinelLink is the password of the Sentinels' link user
	// (newSentinelLink) on the process backend with a password; "" else.
	sentinelLink string

	// etcdAuth is the auth token of the harness's etcd status calls
	// (etcdStatusToken), "" until needed or after a member refused it.
	etcdAuthMu sync.Mutex
	etcdAuth   string

	stopCh   chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// Start launches topology t and waits until it is ready: every redis-server
// answers PING; replicas report master_link_status:up; Sentinels answer and
// each knows the primary, the replicas and the 2 other Sentinels.
// ctx bounds the whole start. On any error everything already started is
// stopped (and a temporary Dir removed) before Start returns.
func Start(ctx context.Context, t Topology, o Options) (*Cluster, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	t = t.normalized()
	be, err := newBackend(o)
	if err != nil {
		return nil, err
	}
	if be.name() == BackendDocker {
		// etcd and ZooKeeper refused; redis-cli on this host for a
		// Redis Cluster, before any container starts.
		if err := CheckTopology(o, t); err != nil {
			return nil, err
		}
	}
	if err := o.resolve(t); err != nil {
		return nil, err
	}
	if err := o.checkSecurity(t); err != nil {
		return nil, err
	}
	c := &Cluster{topo: t, opts: o, be: be, stopCh: make(chan struct{})}
	if o.Dir == "" {
		removeStale(os.TempDir(), time.Now().Add(-staleAfter))
		d, err := os.MkdirTemp("", "lockbench-cluster-")
		if err != nil {
			return nil, fmt.Errorf("%w: cluster: make temp dir: %v", ErrEnvironment, err)
		}
		c.dir, c.ownDir = d, true
		writeOwner(d)
	} else {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("cluster: make dir %s: %w", o.Dir, err)
		}
		c.dir = o.Dir
	}
	if c.opts.Security.TLS && c.be.name() == BackendProcess {
		if err := c.opts.Security.GenerateCerts(c.dir); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if c.opts.Security.Password != "" && c.be.name() == BackendProcess && t.Sentinels > 0 {
		if c.sentinelLink, err = newSentinelLink(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if _, err := c.opts.Security.TLSConfig(); err != nil { // loads the TLS files once
		c.Stop()
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		if serr := c.Stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		return nil, err
	}
	return c, nil
}

// checkSecurity refuses Security where Start cannot honour it: on the
// docker backend, with TLS
// files given to the process backend (it makes its own), and a key
// without a certificate.
func (o *Options) checkSecurity(t Topology) error {
	s := o.Security
	if !s.Enabled() {
		return nil
	}
	if (s.CertFile == "") != (s.KeyFile == "") {
		return fmt.Errorf("cluster: TLS: give both a client certificate and its key (--tls-cert and --tls-key), or neither")
	}
	switch BackendName(*o) {
	case BackendDocker:
		return fmt.Errorf("cluster: the docker backend starts its servers without AUTH or TLS: use --backend process (which starts them with a password and TLS) or external")
	case BackendProcess:
		if s.CAFile != "" || s.CertFile != "" || s.KeyFile != "" || s.ServerName != "" {
			return fmt.Errorf("cluster: the process backend makes its own TLS certificates for the run: drop --tls-ca, --tls-cert, --tls-key and --tls-server-name (they go with --backend external)")
		}
	}
	return nil
}

// Security returns the AUTH and TLS every client of the cluster's Redis
// servers or etcd members must use: Options.Security, with, on the process backend with
// TLS, the CA and client certificate generated for the run.
func (c *Cluster) Security() security.Security { return c.opts.Security }

// resolve applies defaults and checks binaries and the clock shim.
func (o *Options) resolve(t Topology) error {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	switch o.Persistence {
	case "":
		o.Persistence = PersistenceNone
	case PersistenceNone, PersistenceAOF:
	default:
		return fmt.Errorf("cluster: unknown persistence %q (want %q or %q)", o.Persistence, PersistenceNone, PersistenceAOF)
	}
	if o.Backend != "" && o.Backend != BackendProcess {
		if o.ClockShim != "" && o.Backend != BackendProcess {
			o.ClockShim = "" // only the process backend preloads it
		}
		return nil
	}
	switch t.Kind {
	case Etcd:
		p, err := etcdPath(o.Etcd)
		o.Etcd = p
		return err
	case ZooKeeper:
		j, cp, err := zooKeeperPaths(o.Java, o.ZooKeeperClasspath)
		o.Java, o.ZooKeeperClasspath = j, cp
		return err
	}
	p, err := redisServerPath(o.RedisServer)
	if err != nil {
		return err
	}
	o.RedisServer = p
	if t.Sentinels > 0 && o.RedisSentinel == "" {
		if p, err := exec.LookPath("redis-sentinel"); err == nil {
			o.RedisSentinel = p
		}
		// else: RedisServer --sentinel, see sentinelCommand.
	}
	if o.ClockShim != "" {
		abs, err := filepath.Abs(o.ClockShim)
		if err != nil {
			return fmt.Errorf("%w: clock shim %q: %v", ErrEnvironment, o.ClockShim, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("%w: clock shim missing: %v (build it with clockshim.Build or make)", ErrEnvironment, err)
		}
		o.ClockShim = abs
	}
	for _, p := range o.Ports {
		if p < 0 || p > 65535 {
			return fmt.Errorf("cluster: bad port %d in Options.Ports", p)
		}
	}
	return nil
}

// port returns the fixed port for the i-th process (nodes, then
// sentinels), or 0.
func (o *Options) port(i int) int {
	if i < len(o.Ports) {
		return o.Ports[i]
	}
	return 0
}

// start launches the processes of c.topo.
func (c *Cluster) start(ctx context.Context) error {
	if err := c.be.prepare(ctx, c); err != nil {
		return err
	}
	t := c.topo
	switch {
	case c.be.name() == BackendExternal && t.Kind.Consensus():
		return c.startExternalConsensus(ctx)
	case c.be.name() == BackendExternal && t.Kind == RedisCluster:
		return c.startExternalCluster(ctx)
	case c.be.name() == BackendExternal:
		return c.startExternal(ctx)
	case t.Kind.Consensus():
		return c.startConsensus(ctx)
	}
	if t.Kind == RedisCluster {
		return c.startRedisCluster(ctx)
	}
	for i := range t.Nodes {
		n, err := c.newNode(fmt.Sprintf("n%d", i+1), false, c.opts.port(i))
		if err != nil {
			return err
		}
		if t.Kind == Replicated && i > 0 {
			n.replicaOf = c.nodes[0]
		}
		c.nodes = append(c.nodes, n)
	}
	if t.Kind == Replicated {
		return c.startReplicated(ctx)
	}
	// Independent servers start in parallel: each takes ~25 ms.
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = n.start(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.version = c.nodes[0].version
	return nil
}

// Topology returns the (normalized) topology the cluster runs.
func (c *Cluster) Topology() Topology { return c.topo }

// Dir returns the parent folder of the per-node folders.
func (c *Cluster) Dir() string { return c.dir }

// Nodes returns the redis-servers: for Independent n1..nN; for Replicated
// the initial primary first, then the replicas (after a failover the order
// stays the same: ask WaitPrimary or Role who the primary is); for Single
// one node. The slice is a copy; the nodes are shared.
func (c *Cluster) Nodes() []*Node { return append([]*Node(nil), c.nodes...) }

// Addrs returns the addresses of Nodes() (see Node.Addr), in the same order.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		a[i] = n.Addr()
	}
	return a
}

// Node returns the node (redis-server or Sentinel) named name ("n1", "s2"),
// or nil if there is none.
func (c *Cluster) Node(name string) *Node {
	for _, n := range append(c.Nodes(), c.sentinels...) {
		if n.name == name {
			return n
		}
	}
	return nil
}

// Sentinels returns the Sentinel processes s1..s3 (empty without Sentinels).
func (c *Cluster) Sentinels() []*Node { return append([]*Node(nil), c.sentinels...) }

// SentinelAddrs returns the addresses of Sentinels(), for clients that
// discover the primary through Sentinel (redis.NewFailoverClient).
func (c *Cluster) SentinelAddrs() []string {
	a := make([]string, len(c.sentinels))
	for i, n := range c.sentinels {
		a[i] = n.Addr()
	}
	return a
}

// MasterName returns the name the Sentinels monitor the primary under
// (DefaultMasterName, "lockbench", or External.MasterName).
func (c *Cluster) MasterName() string {
	if m := c.opts.External.MasterName; m != "" && c.be.name() == BackendExternal {
		return m
	}
	return DefaultMasterName
}

// RedisVersion returns the redis_version the first node reported at start,
// e.g. "7.0.15" (for etcd and ZooKeeper the same as ServerVersion).
func (c *Cluster) RedisVersion() string { return c.version }

// ServerVersion returns the version of the cluster's servers as they
// report it at start: redis_version (e.g. "7.0.15"), etcd's
// Maintenance.Status version (e.g. "3.7.3"), or ZooKeeper's mntr version
// without its build suffix (e.g. "3.8.0").
func (c *Cluster) ServerVersion() string { return c.version }

// Stop kills every process with SIGKILL (and its process group), waits until
// each is gone, and removes Dir if Start created it. On docker it also
// removes every container of the cluster (with its anonymous volumes) and
// the cluster's network; the external backend's servers are left running
// (lockbench only closes its connections). It is idempotent and
// safe to call concurrently: later calls wait for the first and return its
// error. Errors are joined: a process that would not die, a folder that
// could not be removed.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		close(c.stopCh)
		var errs []error
		var mu sync.Mutex
		var wg sync.WaitGroup
		var running []*Node
		if c.be.name() != BackendExternal { // never stop servers lockbench did not start
			running = append(c.Sentinels(), c.nodes...)
		}
		for _, n := range running {
			wg.Go(func() {
				if err := n.Kill(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, n := range append(c.Sentinels(), c.nodes...) {
			n.closeClient()
		}
		if !c.ownDir && len(running) > 0 {
			if err := c.scrubSentinelConf(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := c.be.close(); err != nil {
			errs = append(errs, err)
		}
		if c.ownDir {
			if err := os.RemoveAll(c.dir); err != nil {
				errs = append(errs, fmt.Errorf("cluster: remove %s: %w", c.dir, err))
			}
		}
		c.stopErr = errors.Join(errs...)
		c.opts.Logf("cluster: stopped %s", c.topo)
	})
	return c.stopErr
}

// stopped reports whether Stop has begun.
func (c *Cluster) stopped() bool {
	select {
	case <-c.stopCh:
		return true
	default:
		return false
	}
}

// staleAfter is how old a temporary cluster folder without an owner file
// must be before removeStale may take it.
const staleAfter = 10 * time.Minute

// ownerFile names, in a temporary cluster folder, the lockbench process
// that made it: "PID STARTTIME" (STARTTIME is field 22 of /proc/PID/stat,
// in clock ticks since boot, so a reused PID is not taken for the owner).
const ownerFile = "lockbench.owner"

// writeOwner records this process as the owner of the cluster folder dir
// (best effort: without the file, removeStale falls back to the folder's
// age).
func writeOwner(dir string) {
	if st, ok := procStart(os.Getpid()); ok {
		os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), st)), 0o644)
	}
}

// procStart returns field 22 of /proc/pid/stat (the process's start time
// in clock ticks since boot); ok is false when the process does not exist.
func procStart(pid int) (string, bool) {
	f, err := proc.Stat(pid)
	if err != nil {
		return "", false
	}
	return f[19], true
}

// ownerGone reports whether the folder dir names an owner (ownerFile) that
// is no longer running; known is false when the folder names none.
func ownerGone(dir string) (gone, known bool) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false, false
	}
	var pid int
	var start string
	if _, err := fmt.Sscan(string(b), &pid, &start); err != nil {
		return false, false
	}
	now, ok := procStart(pid)
	return !ok || now != start, true
}

// removeStale removes temporary cluster folders (lockbench-cluster-* in
// tmp) that no running process works in and whose lockbench is gone: the
// leftovers of a lockbench killed with SIGKILL, whose servers Pdeathsig
// took down but whose folders no Stop removed. A folder whose owner file
// names a lockbench that is no longer running goes at once; one without
// an owner file (an older lockbench's) once last modified before cutoff.
// Best effort: errors are ignored.
func removeStale(tmp string, cutoff time.Time) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-cluster-*"))
	if len(dirs) == 0 {
		return
	}
	busy := map[string]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil {
			busy[cwd] = true
		}
	}
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		if gone, known := ownerGone(d); known && !gone || !known && st.ModTime().After(cutoff) {
			continue
		}
		inUse := false
		for cwd := range busy {
			if cwd == d || strings.HasPrefix(cwd, d+string(filepath.Separator)) {
				inUse = true
				break
			}
		}
		if !inUse {
			os.RemoveAll(d)
		}
	}
}
