package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/cluster/security"
)

// The consensus systems (topologies Etcd and ZooKeeper) run on the process
// backend as N member processes on loopback ports, each in its own folder
// (n1, n2, ...) with its data in a "data" subfolder that Restart keeps, so
// a restarted member rejoins with its log as a Raft or ZAB member must.
// They are started, killed (with the harness too: Pdeathsig), paused and
// cleaned up like redis-servers; Leader finds the current leader and
// WaitQuorum waits until the members agree on one.
//
// Binaries: etcd is built from its Go module at a pinned release (make
// etcd: tools/etcd, into bin/etcd), ZooKeeper is Debian's package
// (apt-get install libzookeeper-java default-jre-headless: the server jar
// and a JVM). The docker backend runs
// neither (see Start); the external backend uses the endpoints given in
// External.EtcdEndpoints and External.ZooKeeperServers.

// Timings of the consensus servers lockbench starts, tuned for lock TTLs
// of a second and session timeouts of a few hundred ms on one machine.
const (
	// EtcdHeartbeat is etcd's --heartbeat-interval (default 100 ms).
	EtcdHeartbeat = 20 * time.Millisecond
	// EtcdElectionTimeout is etcd's --election-timeout (default 1 s): a
	// follower that hears no heartbeat for this long starts an election.
	// etcd raises every lease TTL to at least 1.5 × this (its lessor's
	// minimum), 300 ms here, below the 1 s a lease TTL rounds up to.
	EtcdElectionTimeout = 200 * time.Millisecond
	// ZooKeeperTick is ZooKeeper's tickTime: its unit of time. A session
	// timeout is at least 2 ticks (minSessionTimeout) and sessions expire
	// on tick boundaries; a follower is dropped after syncLimit (10) ticks
	// without the leader, and given initLimit (40) ticks to sync.
	ZooKeeperTick = 50 * time.Millisecond
	// ZooKeeperMaxSessionTimeout is maxSessionTimeout: the longest session
	// timeout the ensemble grants (a client asking more gets this).
	ZooKeeperMaxSessionTimeout = 60 * time.Second
	// ConsensusReadyTimeout bounds the wait for a started member to serve
	// its client port and, at Start, for the members to agree on a leader.
	// A JVM on a loaded 2-core machine takes seconds to start.
	ConsensusReadyTimeout = 30 * time.Second
)

// Fix lines printed when a consensus server is missing.
const (
	etcdHint      = "build it: make etcd (builds go.etcd.io/etcd/server/v3 at the release tools/etcd/go.mod pins into bin/etcd, once, 1-2 min), or put an etcd on PATH"
	zooKeeperHint = "install it: apt-get install libzookeeper-java (Debian's ZooKeeper server jar; or run make bench, which installs it)"
	javaHint      = "install it: apt-get install default-jre-headless (or run make bench, which installs it)"
)

// Debian's ZooKeeper jar (package libzookeeper-java, from the zookeeper
// source package; its manifest's Class-Path names its dependencies) and
// the slf4j binding that makes it log to stderr.
const (
	debianZooKeeperJar = "/usr/share/java/zookeeper.jar"
	debianSLF4JSimple  = "/usr/share/java/slf4j-simple.jar"
	// debianNettyCodec holds the ByteToMessageDecoder that Netty's
	// SslHandler extends: the TLS client port (NettyServerCnxnFactory)
	// needs it, and the jar's manifest does not name it.
	debianNettyCodec = "/usr/share/java/netty-codec.jar"
	zooKeeperMain    = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// zooKeeperJVM are the JVM options of a ZooKeeper server: a small heap
// (the ensemble holds a few hundred lock nodes), the serial collector (no
// GC threads competing for 2 cores), the client compiler only (a faster
// start), no hsperfdata files left in /tmp, and a warn-level log.
var zooKeeperJVM = []string{
	"-Xms16m", "-Xmx96m", "-Xss512k",
	"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError",
	"-Djava.net.preferIPv4Stack=true",
	"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
	"-Dzookeeper.jmx.log4j.disable=true",
}

// ErrNoLeader is returned by Leader when no member reports itself leader:
// a quorum is down, or an election is under way.
var ErrNoLeader = errors.New("cluster: no leader (a quorum is down, or an election is under way)")

// member is what an etcd member or ZooKeeper server needs besides its
// client port (Node.port).
type member struct {
	kind Kind // Etcd or ZooKeeper
	id   int  // 1-based; ZooKeeper's myid
	// peer is etcd's peer port or ZooKeeper's quorum port; election is
	// ZooKeeper's leader-election port (0 for etcd).
	peer, election int
}

// ports returns the member's ports besides the client port.
func (m *member) ports() []int {
	if m.election != 0 {
		return []int{m.peer, m.election}
	}
	return []int{m.peer}
}

// etcdPath returns the etcd server to run: bin when given and usable;
// else etcd beside the running executable (bin/etcd beside bin/lockbench),
// bin/etcd of the lockbench checkout the working directory is in (go test
// runs in a package folder), etcd on PATH. Errors wrap ErrEnvironment.
func etcdPath(bin string) (string, error) {
	if bin != "" {
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("%w: etcd %q not usable (%v); %s", ErrEnvironment, bin, err, etcdHint)
		}
		return p, nil
	}
	var cands []string
	if exe, err := os.Executable(); err == nil {
		cands = append(cands, filepath.Join(filepath.Dir(exe), "etcd"))
	}
	if root := checkoutRoot(); root != "" {
		cands = append(cands, filepath.Join(root, "bin", "etcd"))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: etcd not found (looked beside lockbench, in this checkout's bin/ and on PATH); %s", ErrEnvironment, etcdHint)
}

// checkoutRoot returns the lockbench checkout the working directory is in
// (the nearest folder up with tools/etcd/go.mod), or "".
func checkoutRoot() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "tools", "etcd", "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// zooKeeperPaths returns the java binary and the server's class path:
// java and classpath when given, else java on PATH and Debian's jar (plus
// slf4j-simple when installed). Errors wrap ErrEnvironment.
func zooKeeperPaths(java, classpath string) (string, string, error) {
	if java == "" {
		java = "java"
	}
	j, err := exec.LookPath(java)
	if err != nil {
		return "", "", fmt.Errorf("%w: java (%s) not found, which runs ZooKeeper; %s", ErrEnvironment, java, javaHint)
	}
	if classpath != "" {
		return j, classpath, nil
	}
	if _, err := os.Stat(debianZooKeeperJar); err != nil {
		return "", "", fmt.Errorf("%w: ZooKeeper not installed (%s missing); %s", ErrEnvironment, debianZooKeeperJar, zooKeeperHint)
	}
	cp := debianZooKeeperJar
	for _, j := range []string{debianSLF4JSimple, debianNettyCodec} {
		if _, err := os.Stat(j); err == nil {
			cp += ":" + j
		}
	}
	return j, cp, nil
}

// CheckTopology returns nil when the backend of o can run topology t,
// before anything starts: on the process backend the servers' programs
// are installed (CheckRedisServer for Redis topologies; etcd; java and
// ZooKeeper's jar), the docker backend runs Redis topologies only (for
// a Redis Cluster this host has the redis-cli that joins the
// containers), and the external backend has addresses for t's kind of
// server. A missing program gives an error wrapping ErrEnvironment with
// the line that installs it; docker with etcd or ZooKeeper one wrapping
// ErrUnsupported with the reason.
func CheckTopology(o Options, t Topology) error {
	switch o.Backend {
	case BackendDocker:
		if t.Kind == RedisCluster {
			// This host's redis-cli joins the containers.
			_, err := redisCLIPath(o.RedisServer)
			return err
		}
		return dockerRefuses(t.Kind)
	case BackendExternal:
		return externalMissing(o.External, t.Kind)
	}
	switch t.Kind {
	case Etcd:
		_, err := etcdPath(o.Etcd)
		return err
	case ZooKeeper:
		_, _, err := zooKeeperPaths(o.Java, o.ZooKeeperClasspath)
		return err
	}
	return CheckRedisServer(o)
}

// dockerRefuses returns the docker backend's refusal of kind, nil for a
// Redis topology (a Redis Cluster included).
func dockerRefuses(kind Kind) error {
	switch kind {
	case Etcd:
		return fmt.Errorf("%w: the docker backend runs Redis only (its image is FROM scratch with this machine's redis-server); run etcd on the process backend, or give --etcd-endpoints with --backend external", ErrUnsupported)
	case ZooKeeper:
		return fmt.Errorf("%w: the docker backend cannot run ZooKeeper: a JVM and its jars do not fit its FROM scratch image of one binary and its libraries; run it on the process backend, or give --zk-servers with --backend external", ErrUnsupported)
	}
	return nil
}

// externalMissing names the flag the external backend lacks for kind.
func externalMissing(e External, kind Kind) error {
	switch {
	case kind == Etcd && len(e.EtcdEndpoints) == 0:
		return errors.New("cluster: external backend: an etcd strategy needs the cluster's client endpoints: give --etcd-endpoints host:port,...")
	case kind == ZooKeeper && len(e.ZooKeeperServers) == 0:
		return errors.New("cluster: external backend: a ZooKeeper strategy needs the ensemble's servers: give --zk-servers host:port,...")
	case kind == RedisCluster && len(e.ClusterAddrs) == 0:
		return errors.New("cluster: external backend: a Redis Cluster strategy needs the cluster's seed nodes: give --redis-cluster-addrs host:port,...")
	case kind == RedisCluster:
	case !kind.Consensus() && len(e.Addrs) == 0:
		return errors.New("cluster: external backend needs the servers' addresses (--redis-addrs host:port,...)")
	}
	return nil
}

// startConsensus starts the members of an Etcd or ZooKeeper topology in
// parallel and waits until they agree on a leader. Every member's ports
// are picked before the first start (each member's configuration names
// its peers'); when one was taken before its server bound it, everything
// is killed and started again on fresh ports, at most startAttempts times.
func (c *Cluster) startConsensus(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := c.startMembers(ctx)
		if err == nil {
			break
		}
		for _, n := range c.nodes {
			_ = n.kill()
		}
		c.nodes = nil
		if !errors.Is(err, errPortInUse) {
			return err
		}
		if attempt == startAttempts {
			return fmt.Errorf("%w: cluster: start %s: %d times a free port was taken before the servers bound it", ErrEnvironment, c.topo, attempt)
		}
		c.opts.Logf("cluster: %s: a port was taken at start, retrying on other ports", c.topo)
	}
	if err := c.waitQuorum(ctx, ConsensusReadyTimeout); err != nil {
		return err
	}
	if c.topo.Kind == Etcd && c.opts.Security.Password != "" {
		return c.enableEtcdAuth(ctx)
	}
	return nil
}

// startMembers makes the member nodes with fresh folders and ports and
// starts them in parallel; an error wraps errPortInUse when a port was
// taken.
func (c *Cluster) startMembers(ctx context.Context) error {
	k := c.topo.Kind
	per := 2 // client and peer ports
	if k == ZooKeeper {
		per = 3 // client, quorum, election
	}
	ports, err := freePorts(per * c.topo.Nodes)
	if err != nil {
		return err
	}
	token := make([]byte, 4)
	if _, err := rand.Read(token); err != nil {
		return fmt.Errorf("cluster: cluster token: %w", err)
	}
	c.token = fmt.Sprintf("lockbench-%x", token)
	for i := range c.topo.Nodes {
		n, err := c.newNode(fmt.Sprintf("n%d", i+1), false, ports[per*i])
		if err != nil {
			return err
		}
		n.member = &member{kind: k, id: i + 1, peer: ports[per*i+1]}
		if k == ZooKeeper {
			n.member.election = ports[per*i+2]
		}
		if err := os.MkdirAll(filepath.Join(n.dir, "data"), 0o755); err != nil {
			return fmt.Errorf("cluster: make data dir: %w", err)
		}
		c.nodes = append(c.nodes, n)
	}
	if k == ZooKeeper {
		for _, n := range c.nodes {
			if err := c.writeZooKeeperConfig(n); err != nil {
				return err
			}
		}
	}
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() {
			if errs[i] = n.startOn(ctx, n.port); errs[i] == nil {
				n.mu.Lock()
				n.everStarted = true
				n.mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// freePorts picks k distinct free loopback ports, holding each until all
// are picked so that none is handed out twice.
func freePorts(k int) ([]int, error) {
	ls := make([]net.Listener, 0, k)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, k)
	for range k {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("%w: cluster: pick a free port: %v", ErrEnvironment, err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// memberCommand builds the command line of an etcd member or ZooKeeper
// server listening for clients on port.
func (n *Node) memberCommand(port int) (string, []string, error) {
	o := &n.c.opts
	m := n.member
	if m.kind == ZooKeeper {
		args := slices.Clone(zooKeeperJVM)
		args = append(args, "-cp", o.ZooKeeperClasspath, zooKeeperMain, n.zooKeeperConfig())
		return o.Java, args, nil
	}
	scheme := "http://"
	if o.Security.TLS {
		scheme = "https://"
	}
	url := func(p int) string { return scheme + "127.0.0.1:" + strconv.Itoa(p) }
	var initial []string
	for _, p := range n.c.nodes {
		initial = append(initial, p.name+"="+url(p.member.peer))
	}
	return o.Etcd, append([]string{
		"--name", n.name,
		"--data-dir", filepath.Join(n.dir, "data"),
		"--listen-client-urls", url(port), "--advertise-client-urls", url(port),
		"--listen-peer-urls", url(m.peer), "--initial-advertise-peer-urls", url(m.peer),
		"--initial-cluster", strings.Join(initial, ","),
		"--initial-cluster-state", "new", "--initial-cluster-token", n.c.token,
		"--heartbeat-interval", strconv.FormatInt(EtcdHeartbeat.Milliseconds(), 10),
		"--election-timeout", strconv.FormatInt(EtcdElectionTimeout.Milliseconds(), 10),
		"--log-level", "warn",
	}, etcdSecurityArgs(o.Security)...), nil
}

// etcdSecurityArgs are the etcd arguments of a process-backend member
// for sec: with TLS, client and peer TLS on the run's certificates
// (GenerateCerts: the server certificate serves both ends of a peer
// link), each end demanding a certificate the run's CA signed; with a
// password, the cheapest bcrypt cost (the users' hashes live in the
// run's folder only: a client's Authenticate then costs no CPU to speak
// of) and a day-long simple-token TTL (a status poll or a lock client
// idle for minutes keeps its token). The users themselves are made
// through the Auth API (enableEtcdAuth), so the password is in no
// argument. None for the zero value.
func etcdSecurityArgs(sec security.Security) []string {
	var args []string
	if sec.TLS {
		cert, key := sec.ServerCertFiles()
		args = append(args,
			"--cert-file", cert, "--key-file", key, "--trusted-ca-file", sec.CAFile, "--client-cert-auth",
			"--peer-cert-file", cert, "--peer-key-file", key, "--peer-trusted-ca-file", sec.CAFile, "--peer-client-cert-auth")
	}
	if sec.Password != "" {
		args = append(args, "--bcrypt-cost", "4", "--auth-token-ttl", "86400")
	}
	return args
}

// etcdRunRole is the role enableEtcdAuth gives the run's user (when it
// is not root): read and write on every key.
const etcdRunRole = "lockbench"

// enableEtcdAuth turns authentication on in a process-backend etcd
// cluster that Security asks a password of: it adds user root (etcd
// requires it, with role root, before AuthEnable) and, when Security
// names another user, that user with role etcdRunRole, both with the
// password, through the Auth API (the password crosses the client
// connection only; etcd stores its bcrypt hash), then enables auth.
func (c *Cluster) enableEtcdAuth(ctx context.Context) error {
	sec := c.opts.Security
	var noAuth security.Security = sec
	noAuth.Username, noAuth.Password = "", ""
	cli, err := clientv3.New(*noAuth.ApplyEtcd(&clientv3.Config{Endpoints: c.Addrs(), DialTimeout: ReadyTimeout, Logger: zap.NewNop(), Context: ctx}))
	if err != nil {
		return fmt.Errorf("cluster: etcd client to enable auth: %w", sec.RedactErr(err))
	}
	defer cli.Close()
	actx, cancel := context.WithTimeout(ctx, ConsensusReadyTimeout)
	defer cancel()
	steps := []func() error{
		func() error { _, err := cli.RoleAdd(actx, "root"); return err },
		func() error { _, err := cli.UserAdd(actx, security.EtcdRoot, sec.Password); return err },
		func() error { _, err := cli.UserGrantRole(actx, security.EtcdRoot, "root"); return err },
	}
	if u := sec.EtcdUser(); u != security.EtcdRoot {
		steps = append(steps,
			func() error { _, err := cli.RoleAdd(actx, etcdRunRole); return err },
			func() error {
				// "\x00" to "\x00": every key.
				_, err := cli.RoleGrantPermission(actx, etcdRunRole, "\x00", "\x00", clientv3.PermissionType(clientv3.PermReadWrite))
				return err
			},
			func() error { _, err := cli.UserAdd(actx, u, sec.Password); return err },
			func() error { _, err := cli.UserGrantRole(actx, u, etcdRunRole); return err },
		)
	}
	steps = append(steps, func() error { _, err := cli.AuthEnable(actx); return err })
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("%w: cluster: enable etcd auth: %v", ErrEnvironment, sec.RedactErr(err))
		}
	}
	return nil
}

// etcdStatusToken returns the auth token of the harness's status calls
// (statuses): "" without a password; else the cached one, or a fresh one
// from Authenticate (which needs a quorum: when it fails, "" and the
// error). dropEtcdToken forgets it after a member refused it (a
// restarted member has lost the tokens it knew).
func (c *Cluster) etcdStatusToken(ctx context.Context, addrs []string) (string, error) {
	sec := c.opts.Security
	if sec.Password == "" {
		return "", nil
	}
	c.etcdAuthMu.Lock()
	defer c.etcdAuthMu.Unlock()
	if c.etcdAuth != "" {
		return c.etcdAuth, nil
	}
	noAuth := sec
	noAuth.Username, noAuth.Password = "", ""
	cli, err := clientv3.New(*noAuth.ApplyEtcd(&clientv3.Config{Endpoints: addrs, DialTimeout: consensusTimeout, Logger: zap.NewNop(), Context: ctx}))
	if err != nil {
		return "", sec.RedactErr(err)
	}
	defer cli.Close()
	actx, cancel := context.WithTimeout(ctx, 2*consensusTimeout)
	defer cancel()
	resp, err := cli.Authenticate(actx, sec.EtcdUser(), sec.Password)
	if errors.Is(err, rpctypes.ErrAuthNotEnabled) {
		return "", nil // at Start, before enableEtcdAuth: none needed
	}
	if err != nil {
		return "", sec.RedactErr(err)
	}
	c.etcdAuth = resp.Token
	return c.etcdAuth, nil
}

// dropEtcdToken forgets the status calls' token tok (see etcdStatusToken).
func (c *Cluster) dropEtcdToken(tok string) {
	c.etcdAuthMu.Lock()
	if c.etcdAuth == tok {
		c.etcdAuth = ""
	}
	c.etcdAuthMu.Unlock()
}

// zooKeeperConfig is the path of a ZooKeeper server's zoo.cfg.
func (n *Node) zooKeeperConfig() string { return filepath.Join(n.dir, "zoo.cfg") }

// writeZooKeeperConfig writes n's zoo.cfg and its data folder's myid.
// Four-letter words srvr, mntr, ruok and cons are enabled (Leader and
// readiness use mntr and ruok); the AdminServer (an HTTP port) is off;
// transaction logs preallocate 1 MB instead of 64 MB.
func (c *Cluster) writeZooKeeperConfig(n *Node) error {
	m := n.member
	data := filepath.Join(n.dir, "data")
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(m.id)+"\n"), 0o644); err != nil {
		return fmt.Errorf("cluster: write myid: %w", err)
	}
	tick := ZooKeeperTick.Milliseconds()
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=40\nsyncLimit=10\n", tick)
	fmt.Fprintf(&b, "minSessionTimeout=%d\nmaxSessionTimeout=%d\n", 2*tick, ZooKeeperMaxSessionTimeout.Milliseconds())
	fmt.Fprintf(&b, "dataDir=%s\n", data)
	if tlsConf, err := c.zooKeeperTLSConfig(n.port); err != nil {
		return err
	} else if tlsConf != "" {
		b.WriteString(tlsConf)
	} else {
		fmt.Fprintf(&b, "clientPort=%d\nclientPortAddress=127.0.0.1\n", n.port)
	}
	b.WriteString("4lw.commands.whitelist=srvr,mntr,ruok,cons\nadmin.enableServer=false\npreAllocSize=1024\nreconfigEnabled=false\nstandaloneEnabled=true\n")
	if len(c.nodes) > 1 {
		for _, p := range c.nodes {
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", p.member.id, p.member.peer, p.member.election)
		}
	}
	if err := os.WriteFile(n.zooKeeperConfig(), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("cluster: write zoo.cfg: %w", err)
	}
	return nil
}

// mntr sends ZooKeeper's mntr four-letter word to addr and returns its
// "key<TAB>value" lines as a map (zk_server_state: leader, follower,
// standalone; zk_version). A server that is not serving (an election
// under way) answers a sentence instead: an empty map. go-zookeeper's
// FLWSrvr parses srvr, but not the version line of Debian's build
// ("3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC").
func mntr(ctx context.Context, addr string, timeout time.Duration, sec security.Security) (map[string]string, error) {
	b, err := fourLetterWord(ctx, addr, "mntr", timeout, sec)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

// memberUp reports whether the member process answers on its client
// port: etcd's GET /version (its HTTP and gRPC share the port), or
// ZooKeeper's ruok four-letter word (imok). Both answer before the member
// has joined a quorum. It returns the etcd version ("" for ZooKeeper).
func (n *Node) memberUp(ctx context.Context, addr string, timeout time.Duration) (string, error) {
	if n.member.kind == ZooKeeper {
		if b, err := fourLetterWord(ctx, addr, "ruok", timeout, n.c.opts.Security); err == nil && string(b) == "imok" {
			return "", nil
		}
		return "", fmt.Errorf("ruok: no imok from %s", addr)
	}
	return n.c.opts.Security.EtcdVersion(ctx, addr, timeout)
}

// consensusTimeout bounds each member status call of Leader and
// WaitQuorum: a paused member accepts a connection (kernel backlog) and
// never answers.
const consensusTimeout = 500 * time.Millisecond

// memberStatus is what one member says about the leadership.
type memberStatus struct {
	node    *Node
	leader  bool   // the member says it is the leader (ZooKeeper: or standalone)
	serving bool   // the member follows or leads a quorum
	term    uint64 // etcd's Raft term (0 for ZooKeeper)
	version string
}

// statuses asks every running, unpaused member for its role: etcd's
// Maintenance.Status, ZooKeeper's mntr four-letter word. Members that do
// not answer within consensusTimeout are left out.
func (c *Cluster) statuses(ctx context.Context) ([]memberStatus, error) {
	var nodes []*Node
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		if c.be.name() == BackendProcess {
			if s, err := n.ProcState(); err != nil || s == "T" {
				continue
			}
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	out := make([]memberStatus, len(nodes))
	if c.topo.Kind == ZooKeeper {
		var wg sync.WaitGroup
		for i, n := range nodes {
			out[i].node = n
			wg.Go(func() {
				m, err := mntr(ctx, n.Addr(), consensusTimeout, c.opts.Security)
				if err != nil {
					return
				}
				state := m["zk_server_state"]
				out[i].serving = state == "leader" || state == "follower" || state == "standalone"
				out[i].leader = state == "leader" || state == "standalone"
				out[i].version, _, _ = strings.Cut(m["zk_version"], "-")
			})
		}
		wg.Wait()
		return out, nil
	}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr()
	}
	// With a password, the calls carry a token (etcd asks one of
	// Status with auth on) got once: Authenticate needs a quorum, which a
	// fault may have taken away.
	for i, n := range nodes {
		out[i].node = n
	}
	tok, err := c.etcdStatusToken(ctx, addrs)
	if err != nil {
		return out, nil // no member can be asked: none says it leads
	}
	noAuth := c.opts.Security
	noAuth.Username, noAuth.Password = "", ""
	cli, err := clientv3.New(*noAuth.ApplyEtcd(&clientv3.Config{Endpoints: addrs, DialTimeout: consensusTimeout, Logger: zap.NewNop(), Context: ctx, Token: tok}))
	if err != nil {
		return nil, fmt.Errorf("cluster: etcd client: %w", err)
	}
	defer cli.Close()
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, consensusTimeout)
			defer cancel()
			st, err := cli.Status(sctx, addrs[i])
			if err != nil && tok != "" && (errors.Is(err, rpctypes.ErrInvalidAuthToken) || errors.Is(err, rpctypes.ErrUserEmpty)) {
				c.dropEtcdToken(tok)
			}
			if err != nil || st.Header == nil {
				return
			}
			out[i].serving = st.Leader != 0
			out[i].leader = st.Leader != 0 && st.Leader == st.Header.MemberId
			out[i].term = st.RaftTerm
			out[i].version = st.Version
		})
	}
	wg.Wait()
	return out, nil
}

// Leader returns the member that leads an Etcd or ZooKeeper cluster now:
// the one that says it is the leader (etcd: Maintenance.Status names its
// own member id as leader; ZooKeeper: mntr says zk_server_state leader), the one
// with the highest Raft term if two do (a deposed etcd leader that has not
// noticed yet). Killed and paused members are not asked. It returns an
// error wrapping ErrNoLeader when none does (a quorum is down, an election
// is under way), and one for a Redis topology. ctx bounds the calls.
func (c *Cluster) Leader(ctx context.Context) (*Node, error) {
	if !c.topo.Kind.Consensus() {
		return nil, fmt.Errorf("cluster: Leader is for etcd and ZooKeeper; topology %s has a primary (see WaitPrimary)", c.topo)
	}
	sts, err := c.statuses(ctx)
	if err != nil {
		return nil, err
	}
	var best *memberStatus
	for i, s := range sts {
		if s.leader && (best == nil || s.term > best.term) {
			best = &sts[i]
		}
	}
	if best == nil {
		return nil, ErrNoLeader
	}
	return best.node, nil
}

// WaitQuorum waits until every running, unpaused member of an Etcd or
// ZooKeeper cluster serves (follows or leads) and one of them is the
// leader, polling every 20 ms for at most timeout (0: ConsensusReadyTimeout):
// after Start, and after Restart when a fault needs the member back in
// its quorum (Restart itself returns once the process answers). It
// returns an error wrapping ErrNoLeader at the timeout, and ctx's error
// when ctx ends first.
func (c *Cluster) WaitQuorum(ctx context.Context, timeout time.Duration) error {
	if !c.topo.Kind.Consensus() {
		return fmt.Errorf("cluster: WaitQuorum is for etcd and ZooKeeper, not topology %s", c.topo)
	}
	if timeout <= 0 {
		timeout = ConsensusReadyTimeout
	}
	return c.waitQuorum(ctx, timeout)
}

// waitQuorum is WaitQuorum; it also records the server version.
func (c *Cluster) waitQuorum(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		sts, err := c.statuses(ctx)
		if err != nil {
			return err
		}
		leaders, serving := 0, 0
		for _, s := range sts {
			if s.serving {
				serving++
			}
			if s.leader {
				leaders++
			}
			if s.version != "" && c.version == "" {
				c.version = s.version
			}
		}
		if len(sts) > 0 && leaders == 1 && serving == len(sts) {
			return nil
		}
		last = fmt.Sprintf("%d of %d members serve, %d leader(s)", serving, len(sts), leaders)
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: cluster: %s: no agreed leader within %v (%s); %s", ErrNoLeader, c.topo, timeout, last, c.nodes[0].logTail())
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("cluster: wait for a leader of %s: %w", c.topo, ctx.Err())
		case <-c.stopCh:
			return fmt.Errorf("cluster: wait for a leader of %s: cluster stopped", c.topo)
		}
	}
}

// startExternalConsensus makes nodes of External.EtcdEndpoints or
// External.ZooKeeperServers and checks each answers within ReadyTimeout.
func (c *Cluster) startExternalConsensus(ctx context.Context) error {
	k := c.topo.Kind
	if err := externalMissing(c.opts.External, k); err != nil {
		return err
	}
	addrs := c.opts.External.EtcdEndpoints
	if k == ZooKeeper {
		addrs = c.opts.External.ZooKeeperServers
	}
	for i, a := range addrs {
		h, p, err := hostPort(a)
		if err != nil {
			return fmt.Errorf("cluster: external backend: %s address %q: %v (want host:port)", k, a, err)
		}
		n := &Node{c: c, name: "n" + strconv.Itoa(i+1), dir: c.dir, host: h, port: p, fixed: true, everStarted: true,
			member: &member{kind: k, id: i + 1}}
		// etcd answers GET /version; a ZooKeeper server may refuse every
		// four-letter word but srvr (its default whitelist), so it is
		// asked for a session (over TLS and logged in as Security says:
		// a refusal is one line naming the server and the fix).
		if k == ZooKeeper {
			var conn net.Conn
			if conn, err = (&net.Dialer{Timeout: ReadyTimeout}).DialContext(ctx, "tcp", n.Addr()); err == nil {
				conn.Close()
				if err := c.opts.Security.ProbeZK(ctx, n.Addr()); err != nil {
					return fmt.Errorf("cluster: external backend: %w", err)
				}
			}
		} else if _, err = n.memberUp(ctx, n.Addr(), ReadyTimeout); err != nil {
			// A certificate or TLS-versus-plain refusal, named with its fix.
			if e := c.opts.Security.ExplainEtcd(a, err); errors.Is(e, ErrEnvironment) {
				return fmt.Errorf("cluster: external: %w", e)
			}
		}
		if err != nil {
			return fmt.Errorf("%w: cluster: external %s server %s does not answer: %v (is it up and reachable from here?)", ErrEnvironment, k, a, c.opts.Security.Redact(err.Error()))
		}
		c.nodes = append(c.nodes, n)
	}
	c.topo.Nodes = len(c.nodes)
	sts, err := c.statuses(ctx)
	if err != nil {
		return err
	}
	for _, s := range sts {
		if s.version != "" {
			c.version = s.version
			break
		}
	}
	return nil
}
