package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/cluster/security"
)

// Redis Cluster timings.
const (
	// clusterNodeTimeout is the cluster-node-timeout of the process
	// backend's Redis Cluster nodes: a primary unreachable this long is
	// flagged PFAIL, then FAIL once a majority of primaries agree, and its
	// replica waits 500 ms plus up to 500 ms more before it asks for votes.
	// Measured on 2 busy cores (TestRedisClusterFailover): the replica
	// takes over about 1.5-2.5 s after its primary is SIGKILLed.
	clusterNodeTimeout = 500 * time.Millisecond
	// clusterReadyTimeout bounds the wait for cluster_state:ok on every
	// node and every replica in sync after redis-cli --cluster create
	// (and after a slot migration or a failover, for WaitClusterOK).
	clusterReadyTimeout = 20 * time.Second
)

// clusterArgs are the redis-server arguments of a Redis Cluster node with
// its folder dir and cluster bus port bus. cluster-replica-validity-factor
// 0 lets a replica fail over however long its link was down (a replica
// held back on purpose must still be elected).
func clusterArgs(dir string, bus int) []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--cluster-node-timeout", strconv.FormatInt(clusterNodeTimeout.Milliseconds(), 10),
		"--cluster-port", strconv.Itoa(bus),
		"--cluster-replica-validity-factor", "0",
	}
}

// clusterBusPort returns the node's cluster bus port, picking a free one
// on its first start (port+10000, Redis's default, may be taken or past
// 65535).
func (n *Node) clusterBusPort() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.busPort == 0 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		n.busPort = p
	}
	return n.busPort, nil
}

// startRedisCluster starts the six redis-servers of a RedisCluster in
// parallel, joins them with redis-cli --cluster create --cluster-replicas
// 1 (the first three become primaries, each of the others a replica of
// one), and waits until every node reports cluster_state:ok and knows
// all six, and every replica's link is up and in sync.
func (c *Cluster) startRedisCluster(ctx context.Context) error {
	for i := range c.topo.Nodes {
		n, err := c.newNode(fmt.Sprintf("n%d", i+1), false, c.opts.port(i))
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
	}
	if err := startAll(ctx, c.nodes); err != nil {
		return err
	}
	c.version = c.nodes[0].version
	cli, err := redisCLIPath(c.opts.RedisServer)
	if err != nil {
		return err
	}
	// The password reaches redis-cli through REDISCLI_AUTH, never its
	// command line (ps would show it).
	sec := c.opts.Security
	secArgs, secEnv := sec.CLIArgs()
	args := append(secArgs, "--cluster", "create")
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(clusterReplicas), "--cluster-yes")
	cctx, cancel := context.WithTimeout(ctx, clusterReadyTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, cli, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), secEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		tail := strings.TrimSpace(sec.Redact(string(out)))
		if len(tail) > 600 {
			tail = tail[len(tail)-600:]
		}
		return fmt.Errorf("%w: cluster: redis-cli --cluster create: %v: %s", ErrEnvironment, err, tail)
	}
	c.opts.Logf("cluster: redis-cli --cluster create joined %d nodes", len(c.nodes))
	return c.WaitClusterOK(ctx)
}

// redisCLIPath finds redis-cli: beside the redis-server in use, else on
// PATH (the docker backend's image has none: this host's joins the
// containers). A missing one wraps ErrEnvironment.
func redisCLIPath(server string) (string, error) {
	if server != "" {
		p := filepath.Join(filepath.Dir(server), "redis-cli")
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("redis-cli")
	if err != nil {
		return "", fmt.Errorf("%w: redis-cli not found on PATH (a Redis Cluster is joined with redis-cli --cluster create, from this host on the docker backend too); install it: apt-get install redis-tools", ErrEnvironment)
	}
	return p, nil
}

// clusterEntry is one line of CLUSTER NODES.
type clusterEntry struct {
	id, addr, masterID string
	master, fail       bool
	slots              [][2]int
}

// parseClusterNodes parses CLUSTER NODES: "id ip:port@bus flags master
// ping pong epoch link slot...". Importing and migrating markers ("[...]")
// are skipped.
func parseClusterNodes(s string) []clusterEntry {
	var out []clusterEntry
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		addr, _, _ = strings.Cut(addr, ",")
		flags := strings.Split(f[2], ",")
		e := clusterEntry{id: f[0], addr: addr, masterID: f[3],
			master: slices.Contains(flags, "master"), fail: slices.Contains(flags, "fail") || slices.Contains(flags, "noaddr")}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, rng := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if rng {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil {
				e.slots = append(e.slots, [2]int{a, b})
			}
		}
		out = append(out, e)
	}
	return out
}

// owns reports whether the entry serves slot.
func (e clusterEntry) owns(slot int) bool {
	for _, r := range e.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// clusterView returns CLUSTER NODES as the first running node that
// answers sees it.
func (c *Cluster) clusterView(ctx context.Context) ([]clusterEntry, *Node, error) {
	if c.topo.Kind != RedisCluster {
		return nil, nil, fmt.Errorf("cluster: %s is no Redis Cluster", c.topo)
	}
	var errs []error
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		v, err := n.do(ctx, "CLUSTER", "NODES")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return parseClusterNodes(fmt.Sprint(v)), n, nil
	}
	return nil, nil, fmt.Errorf("cluster: no node answers CLUSTER NODES: %w", errors.Join(errs...))
}

// KeySlot returns the hash slot of key (CLUSTER KEYSLOT on a running
// node): the slot the lock of key lives in.
func (c *Cluster) KeySlot(ctx context.Context, key string) (int, error) {
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		v, err := n.do(ctx, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			continue
		}
		if s, ok := v.(int64); ok {
			return int(s), nil
		}
	}
	return 0, fmt.Errorf("cluster: CLUSTER KEYSLOT %q: no running node answered", key)
}

// SlotPrimary returns the primary that serves slot, as a running node sees
// it (CLUSTER NODES), and the replicas that replicate it (running or not).
func (c *Cluster) SlotPrimary(ctx context.Context, slot int) (*Node, []*Node, error) {
	view, _, err := c.clusterView(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range view {
		if !e.master || e.fail || !e.owns(slot) {
			continue
		}
		p := c.nodeByAddr(e.addr)
		if p == nil {
			return nil, nil, fmt.Errorf("cluster: slot %d is served by %s, which is none of this cluster's nodes", slot, e.addr)
		}
		var reps []*Node
		for _, r := range view {
			if r.masterID == e.id {
				if n := c.nodeByAddr(r.addr); n != nil {
					reps = append(reps, n)
				}
			}
		}
		return p, reps, nil
	}
	return nil, nil, fmt.Errorf("cluster: no live primary serves slot %d", slot)
}

// Primaries returns the nodes that serve slots now, in node order.
func (c *Cluster) Primaries(ctx context.Context) ([]*Node, error) {
	view, _, err := c.clusterView(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, n := range c.nodes {
		for _, e := range view {
			if e.addr == n.Addr() && e.master && !e.fail && len(e.slots) > 0 {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// WaitClusterOK waits (at most 20 s, and ctx) until every running node of
// a RedisCluster reports cluster_state:ok with all 16384 slots served and
// every running node known, no node of it is flagged failed, and every
// running replica's link to its primary is up and in sync. Other
// topologies return nil at once.
func (c *Cluster) WaitClusterOK(ctx context.Context) error {
	if c.topo.Kind != RedisCluster {
		return nil
	}
	return poll(ctx, clusterReadyTimeout, "waiting for cluster_state:ok on every node and replicas in sync", func() (bool, error) {
		running := 0
		for _, n := range c.nodes {
			if n.Running() {
				running++
			}
		}
		for _, n := range c.nodes {
			if !n.Running() {
				continue
			}
			v, err := n.do(ctx, "CLUSTER", "INFO")
			if err != nil {
				return false, err
			}
			info := parseInfo(fmt.Sprint(v))
			if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != "16384" {
				return false, fmt.Errorf("%s: cluster_state:%s, cluster_slots_ok:%s", n.name, info["cluster_state"], info["cluster_slots_ok"])
			}
			if k, _ := strconv.Atoi(info["cluster_known_nodes"]); k < running {
				return false, fmt.Errorf("%s knows %d nodes, %d run", n.name, k, running)
			}
			rep, err := n.Info(ctx, "replication")
			if err != nil {
				return false, err
			}
			if rep["role"] == "slave" && (rep["master_link_status"] != "up" || rep["master_sync_in_progress"] != "0") {
				return false, fmt.Errorf("%s: replica link %s", n.name, rep["master_link_status"])
			}
		}
		return true, nil
	})
}

// MigrateSlot moves slot, with its keys and their TTLs, from the primary
// serving it to primary to, as redis-cli --cluster reshard does: CLUSTER
// SETSLOT IMPORTING on to, MIGRATING on the source, MIGRATE of every key
// of the slot (CLUSTER GETKEYSINSLOT, in batches), then CLUSTER SETSLOT
// NODE on to, the source and every other primary. Clients that ask the
// source for a key already moved get ASK during the move and MOVED after
// it. It returns the source primary and how many keys moved. External
// backend: only with External.AllowDestructive.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, to *Node) (*Node, int, error) {
	if err := c.allowRedisFault("CLUSTER SETSLOT and MIGRATE"); err != nil {
		return nil, 0, err
	}
	from, _, err := c.SlotPrimary(ctx, slot)
	if err != nil {
		return nil, 0, err
	}
	if from == to {
		return from, 0, fmt.Errorf("cluster: slot %d is already served by %s", slot, to.name)
	}
	id := func(n *Node) (string, error) {
		v, err := n.do(ctx, "CLUSTER", "MYID")
		if err != nil {
			return "", fmt.Errorf("cluster: CLUSTER MYID on %s: %w", n.name, err)
		}
		return fmt.Sprint(v), nil
	}
	fromID, err := id(from)
	if err != nil {
		return from, 0, err
	}
	toID, err := id(to)
	if err != nil {
		return from, 0, err
	}
	step := func(n *Node, args ...any) error {
		if _, err := n.do(ctx, args...); err != nil {
			return fmt.Errorf("cluster: migrate slot %d %s→%s: %v on %s: %w", slot, from.name, to.name, args, n.name, err)
		}
		return nil
	}
	if err := step(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID); err != nil {
		return from, 0, err
	}
	if err := step(from, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID); err != nil {
		return from, 0, err
	}
	moved := 0
	for {
		v, err := from.do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 100)
		if err != nil {
			return from, moved, fmt.Errorf("cluster: CLUSTER GETKEYSINSLOT %d on %s: %w", slot, from.name, err)
		}
		keys, _ := v.([]any)
		if len(keys) == 0 {
			break
		}
		if err := migrateKeys(ctx, from, to, keys, c.opts.Security); err != nil {
			return from, moved, fmt.Errorf("cluster: migrate slot %d: %w", slot, err)
		}
		moved += len(keys)
	}
	// The new owner first, then the old one (it stops serving the slot),
	// then every other primary, as redis-cli does.
	order := []*Node{to, from}
	prims, err := c.Primaries(ctx)
	if err == nil {
		for _, p := range prims {
			if p != to && p != from {
				order = append(order, p)
			}
		}
	}
	for _, n := range order {
		if err := step(n, "CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
			return from, moved, err
		}
	}
	c.opts.Logf("cluster: slot %d moved %s→%s (%d keys)", slot, from.name, to.name, moved)
	return from, moved, nil
}

// migrateKeys moves keys from from to to with one MIGRATE (timeout 5 s),
// which logs in to to as sec (MIGRATE's AUTH2 or AUTH argument) when it
// holds a password. The error names the command and the nodes, never the
// password.
func migrateKeys(ctx context.Context, from, to *Node, keys []any, sec security.Security) error {
	args := []any{"MIGRATE", to.Host(), to.Port(), "", 0, 5000}
	args = append(args, sec.MigrateAuth()...)
	args = append(append(args, "KEYS"), keys...)
	if _, err := from.do(ctx, args...); err != nil {
		return fmt.Errorf("MIGRATE of %d keys %s→%s: %w", len(keys), from.name, to.name, sec.RedactErr(err))
	}
	return nil
}

// externalClusterView asks the first seed that answers for CLUSTER NODES
// and returns the nodes listed there that are not flagged failed,
// primaries first. With TLS each seed must complete a handshake first
// (Security.ProbeTLS: a plain port is named as such). A seed that is up but
// refuses the TLS handshake, the password or the certificate ends the
// search with that one line (every node of a cluster shares them); when
// no seed answers the error names each, on one line. Errors wrap ErrEnvironment and never quote the password.
func externalClusterView(ctx context.Context, seeds []string, sec security.Security) ([]clusterEntry, error) {
	var errs []string
	for _, a := range seeds {
		// A seed that is down leaves the others to try; one that is up
		// but fails the TLS handshake is a TLS problem of them all.
		conn, err := (&net.Dialer{Timeout: ReadyTimeout}).DialContext(ctx, "tcp", a)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", a, err))
			continue
		}
		conn.Close()
		if err := sec.ProbeTLS(ctx, a); err != nil {
			return nil, err
		}
		rc := keyClient(a, sec)
		v, err := rc.Do(ctx, "CLUSTER", "NODES").Result()
		rc.Close()
		if err != nil {
			if e := sec.Explain(a, err); errors.Is(e, ErrEnvironment) {
				return nil, fmt.Errorf("cluster: external Redis Cluster: %w", e)
			}
			errs = append(errs, fmt.Sprintf("%s: CLUSTER NODES: %v (is it a Redis Cluster node?)", a, sec.Redact(err.Error())))
			continue
		}
		view := parseClusterNodes(fmt.Sprint(v))
		slices.SortStableFunc(view, func(a, b clusterEntry) int {
			if a.master == b.master {
				return 0
			}
			if a.master {
				return -1
			}
			return 1
		})
		view = slices.DeleteFunc(view, func(e clusterEntry) bool { return e.fail })
		if len(view) == 0 {
			return nil, fmt.Errorf("%w: cluster: external Redis Cluster: %s lists no live node", ErrEnvironment, a)
		}
		return view, nil
	}
	return nil, fmt.Errorf("%w: cluster: external Redis Cluster: no seed of --redis-cluster-addrs answers (%s): check that they are the cluster's nodes, up and reachable from here", ErrEnvironment, strings.Join(errs, "; "))
}

// ClusterNodeAddrs returns the addresses of the live nodes of the
// external Redis Cluster whose seeds are e.ClusterAddrs, primaries first,
// as the first seed that answers lists them in CLUSTER NODES, connecting
// as sec (see externalClusterView for the errors: they wrap ErrEnvironment
// and never quote the password). preflight checks each before a run.
func (e External) ClusterNodeAddrs(ctx context.Context, sec security.Security) ([]string, error) {
	view, err := externalClusterView(ctx, e.ClusterAddrs, sec)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, len(view))
	for i, n := range view {
		addrs[i] = n.addr
	}
	return addrs, nil
}

// startExternalCluster makes the nodes of an external Redis Cluster
// (externalClusterView of External.ClusterAddrs): a node n1, n2, ... of
// every live primary and replica, primaries first.
func (c *Cluster) startExternalCluster(ctx context.Context) error {
	view, err := externalClusterView(ctx, c.opts.External.ClusterAddrs, c.opts.Security)
	if err != nil {
		return err
	}
	for _, e := range view {
		h, p, err := hostPort(e.addr)
		if err != nil {
			return fmt.Errorf("cluster: external Redis Cluster: node address %q: %v", e.addr, err)
		}
		c.nodes = append(c.nodes, &Node{c: c, name: "n" + strconv.Itoa(len(c.nodes)+1), dir: c.dir, host: h, port: p, fixed: true, everStarted: true})
	}
	info, err := rawInfo(ctx, c.nodes[0].Addr(), ReadyTimeout, c.opts.Security)
	if err != nil {
		return unreachable(c.nodes[0].Addr(), "INFO", c.opts.Security, err)
	}
	c.version = info["redis_version"]
	for _, n := range c.nodes {
		n.version = c.version
	}
	return nil
}

// ClusterFailover sends CLUSTER FAILOVER FORCE to a Redis Cluster replica:
// it takes over its primary's slots once a majority of primaries vote for
// it, without waiting for the primary to be flagged failed (a dead
// primary cannot take part in a manual failover's handshake, hence FORCE).
// External backend: only with External.AllowDestructive.
func (n *Node) ClusterFailover(ctx context.Context) error {
	if err := n.c.allowRedisFault("CLUSTER FAILOVER FORCE"); err != nil {
		return err
	}
	if _, err := n.do(ctx, "CLUSTER", "FAILOVER", "FORCE"); err != nil {
		return fmt.Errorf("cluster: CLUSTER FAILOVER FORCE on %s: %w", n.name, err)
	}
	n.c.opts.Logf("cluster: CLUSTER FAILOVER FORCE on %s", n.name)
	return nil
}
