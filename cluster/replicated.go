package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
)

// Sentinel settings, as measured on Redis 7: with these a dead
// primary is replaced ~2.2 s after it dies. failover-timeout 1000
// misbehaves (two primaries for ~10 s), hence 3000.
const (
	// SentinelQuorum is how many Sentinels must agree the primary is down.
	SentinelQuorum = 2
	// SentinelDownAfterMilliseconds is how long (ms) the primary must be
	// unreachable before a Sentinel marks it down.
	SentinelDownAfterMilliseconds = 1000
	// SentinelFailoverTimeout is Sentinel's failover-timeout in ms.
	SentinelFailoverTimeout = 3000
)

// syncTimeout bounds the wait for replicas to sync and Sentinels to
// discover each other at start.
const syncTimeout = 10 * time.Second

// newClient returns a go-redis client for addr with up to poolSize
// connections, tuned for fault injection: short timeouts, one dial
// attempt, no command retries (NOTES: the defaults
// retry a failed dial 5 times and hide "refused" for ~1 s).
func newClient(addr string, sec security.Security, poolSize int) *redis.Client {
	return redis.NewClient(sec.Apply(&redis.Options{
		Addr:            addr,
		DialTimeout:     time.Second,
		ReadTimeout:     2 * time.Second,
		WriteTimeout:    time.Second,
		MaxRetries:      -1,
		DialerRetries:   1,
		PoolSize:        poolSize,
		DisableIdentity: true,
	}))
}

// do runs one command on the node (Node.client).
func (n *Node) do(ctx context.Context, args ...any) (any, error) {
	rc, done := n.client()
	v, err := rc.Do(ctx, args...).Result()
	done(err)
	return v, err
}

// client returns a client of the node for one command or a few, and the
// func to call with their error when done with it. Plain: a fresh
// short-lived client (a connect costs ~1 ms), closed by done. With TLS a
// connection costs a handshake and AUTH, ~20 ms on 2 busy cores
// (measured: a nemesis that looked up a key's slot and primary and paused
// its replica this way after a release came too late for the next grant,
// seeds 1-3 of cluster-failover missed), so the node keeps one client
// (up to tlsPoolSize connections) until Stop. done drops it after an
// error that is no Redis reply (a kill, a pause, a timeout): the next
// call dials afresh, never behind a pool that counted failed dials.
func (n *Node) client() (*redis.Client, func(error)) {
	addr, sec := n.Addr(), n.c.opts.Security
	if !sec.TLS || n.c.stopped() {
		rc := newClient(addr, sec, 1)
		return rc, func(error) { rc.Close() }
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tlsClient != nil && n.tlsClient.Options().Addr != addr {
		n.tlsClient.Close()
		n.tlsClient = nil
	}
	if n.tlsClient == nil {
		n.tlsClient = newClient(addr, sec, tlsPoolSize)
	}
	rc := n.tlsClient
	return rc, func(err error) {
		var reply redis.Error
		if err == nil || errors.Is(err, redis.Nil) || errors.As(err, &reply) {
			return
		}
		n.mu.Lock()
		if n.tlsClient == rc {
			n.tlsClient = nil
		}
		n.mu.Unlock()
		rc.Close()
	}
}

// tlsPoolSize bounds the connections of a node's kept TLS client: the
// commands the harness sends one node at once (a fault, a poll, a view).
const tlsPoolSize = 4

// closeClient closes the node's kept TLS client, if any (Stop).
func (n *Node) closeClient() {
	n.mu.Lock()
	rc := n.tlsClient
	n.tlsClient = nil
	n.mu.Unlock()
	if rc != nil {
		rc.Close()
	}
}

// startReplicated starts the primary, then the replicas (in parallel), waits
// until every replica's link is up, then starts and waits for Sentinels.
func (c *Cluster) startReplicated(ctx context.Context) error {
	primary := c.nodes[0]
	if err := primary.start(ctx); err != nil {
		return err
	}
	c.version = primary.version
	if err := startAll(ctx, c.nodes[1:]); err != nil {
		return err
	}
	for _, r := range c.nodes[1:] {
		if err := r.waitLinkUp(ctx); err != nil {
			return err
		}
	}
	if c.topo.Sentinels == 0 {
		return nil
	}
	for i := range c.topo.Sentinels {
		s, err := c.newNode(fmt.Sprintf("s%d", i+1), true, c.opts.port(c.topo.Nodes+i))
		if err != nil {
			return err
		}
		s.replicaOf = primary // the primary it monitors at first
		c.sentinels = append(c.sentinels, s)
	}
	if err := startAll(ctx, c.sentinels); err != nil {
		return err
	}
	return c.waitSentinelsDiscovered(ctx)
}

// startAll starts nodes in parallel and joins their errors.
func startAll(ctx context.Context, nodes []*Node) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = n.start(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// poll calls f every 20 ms until it reports done, returns an error, timeout
// passes or ctx ends. what names the condition in the timeout error.
func poll(ctx context.Context, timeout time.Duration, what string, f func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		done, err := f()
		if done {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("cluster: %s: %w (last error: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("cluster: %s: %w", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Info returns the fields of INFO section (e.g. "replication", "server")
// of a running node.
func (n *Node) Info(ctx context.Context, section string) (map[string]string, error) {
	rc, done := n.client()
	s, err := rc.Info(ctx, section).Result()
	done(err)
	if err != nil {
		return nil, fmt.Errorf("cluster: INFO %s on %s: %w", section, n.name, err)
	}
	return parseInfo(s), nil
}

// Role returns the node's role as INFO replication reports it: "master" or
// "slave" (a Sentinel answers "sentinel").
func (n *Node) Role(ctx context.Context) (string, error) {
	if n.sentinel {
		return "sentinel", nil
	}
	info, err := n.Info(ctx, "replication")
	if err != nil {
		return "", err
	}
	return info["role"], nil
}

// waitLinkUp waits until the replica reports master_link_status:up.
func (n *Node) waitLinkUp(ctx context.Context) error {
	return poll(ctx, syncTimeout, n.name+" waiting for master_link_status:up", func() (bool, error) {
		info, err := n.Info(ctx, "replication")
		if err != nil {
			return false, err
		}
		return info["master_link_status"] == "up", nil
	})
}

// WaitReplicated waits (at most 10 s, and ctx) until every running replica
// reports master_link_status:up and has acknowledged the primary's whole
// replication stream (offset equal to the primary's master_repl_offset).
// Use it before a fault that must not lose writes already acknowledged.
func (c *Cluster) WaitReplicated(ctx context.Context) error {
	if c.topo.Kind != Replicated {
		return nil
	}
	return poll(ctx, syncTimeout, "waiting for replicas to catch up", func() (bool, error) {
		var primary *Node
		for _, n := range c.nodes {
			if !n.Running() {
				continue
			}
			if r, err := n.Role(ctx); err == nil && r == "master" {
				primary = n
				break
			}
		}
		if primary == nil {
			return false, errors.New("no running primary")
		}
		info, err := primary.Info(ctx, "replication")
		if err != nil {
			return false, err
		}
		want := info["master_repl_offset"]
		connected, _ := strconv.Atoi(info["connected_slaves"])
		caughtUp := 0
		for i := range connected {
			// slaveN:ip=127.0.0.1,port=P,state=online,offset=O,lag=L
			if strings.Contains(info["slave"+strconv.Itoa(i)], "state=online,offset="+want+",") {
				caughtUp++
			}
		}
		running := 0
		for _, n := range c.nodes {
			if n != primary && n.Running() {
				running++
			}
		}
		return caughtUp >= running, nil
	})
}

// Promote makes the node a primary: REPLICAOF NO ONE (external backend:
// only with External.AllowDestructive, else ErrUnsupported). It does not touch the
// old primary or the other replicas (without Sentinel nobody re-points
// them; see ReplicaOf). While a HoldReplication pause runs on the node,
// Promote blocks until the pause ends (CLIENT PAUSE ALL holds every
// command), so bound ctx accordingly.
func (n *Node) Promote(ctx context.Context) error {
	if err := n.c.allowRedisFault("REPLICAOF NO ONE"); err != nil {
		return err
	}
	if _, err := n.do(ctx, "REPLICAOF", "NO", "ONE"); err != nil {
		return fmt.Errorf("cluster: promote %s: %w", n.name, err)
	}
	n.c.opts.Logf("cluster: promoted %s (REPLICAOF NO ONE)", n.name)
	return nil
}

// ReplicaOf makes the node a replica of primary: REPLICAOF HOST PORT with
// primary's address.
// It returns when the command is accepted; the sync runs in the background
// (see WaitReplicated).
func (n *Node) ReplicaOf(ctx context.Context, primary *Node) error {
	if err := n.c.allowRedisFault("REPLICAOF"); err != nil {
		return err
	}
	if _, err := n.do(ctx, "REPLICAOF", primary.Host(), strconv.Itoa(primary.Port())); err != nil {
		return fmt.Errorf("cluster: %s REPLICAOF %s: %w", n.name, primary.name, err)
	}
	n.c.opts.Logf("cluster: %s now replicates %s", n.name, primary.name)
	return nil
}

// HoldReplication (external backend: only with External.AllowDestructive)
// stops the replica applying its replication stream for d
// (whole milliseconds, at least 1 ms), by CLIENT PAUSE <ms> ALL on the
// replica. It returns once the pause is in force; the pause ends by itself.
// A write the primary acknowledges during the hold is lost if the primary
// dies and the replica is promoted before d ends: the replica drops the
// unapplied stream when its link breaks (measured: SIGSTOP or
// DEBUG SLEEP on the replica do not lose it, this does, every time). Side
// effects: every client of the replica, Sentinel included, waits until the
// hold ends, and so does Promote on this node.
func (n *Node) HoldReplication(ctx context.Context, d time.Duration) error {
	if err := n.c.allowRedisFault("CLIENT PAUSE"); err != nil {
		return err
	}
	ms := max(d.Milliseconds(), 1)
	if _, err := n.do(ctx, "CLIENT", "PAUSE", ms, "ALL"); err != nil {
		return fmt.Errorf("cluster: hold replication on %s: %w", n.name, err)
	}
	n.c.opts.Logf("cluster: replication held on %s for %dms", n.name, ms)
	return nil
}

// sentinelCommand writes a fresh Sentinel config on the first start (a
// restart keeps the one Sentinel rewrote) and returns the command line:
// redis-sentinel CONFIG, or redis-server CONFIG --sentinel. The config
// path comes first, as Sentinel requires. With TLS the Sentinel listens
// on TLS only and speaks TLS to the servers and the other Sentinels
// (tls-replication), presenting the run's server certificate. With a
// password a fresh Sentinel reads its ACL and link credentials on its
// standard input (sentinelAuthConfig; a restart finds them in the config
// it rewrote).
func (n *Node) sentinelCommand(port int) (bin string, args []string, stdin string, err error) {
	o := &n.c.opts
	conf := filepath.Join(n.dir, "sentinel.conf")
	n.mu.Lock()
	fresh := !n.fixed || !n.everStarted
	n.mu.Unlock()
	if fresh {
		text := sentinelConf(port, "127.0.0.1", n.dir, n.LogFile(), "127.0.0.1", n.replicaOf.Port())
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return "", nil, "", fmt.Errorf("cluster: write sentinel config: %w", err)
		}
		stdin = n.c.sentinelAuthConfig()
	}
	bin, args = o.RedisServer, []string{conf, "--sentinel"}
	if o.RedisSentinel != "" {
		bin, args = o.RedisSentinel, []string{conf}
	}
	args = append(args, o.Security.ServerTLSArgs(port, false)...)
	if stdin != "" {
		args = append(args, "-")
	}
	return bin, args, stdin, nil
}

// sentinelLinkUserName is the ACL user through which the Sentinels of a
// process-backend run with a password log in to the servers and to each
// other.
const sentinelLinkUserName = "lockbench-sentinel"

// newSentinelLink returns a fresh random password for the Sentinels' link
// user (32 hex digits). Sentinel rewrites its link credentials into its
// config file in clear (sentinel auth-pass), so the Sentinels log in with
// this password made for the run, never with the user's.
func newSentinelLink() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("cluster: make the Sentinels' link password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// sentinelLinkUser is the redis-server configuration line of the
// Sentinels' link user (stdin, with ServerAuthConfig); "" without
// Sentinels or a password.
func (c *Cluster) sentinelLinkUser() string {
	if c.sentinelLink == "" {
		return ""
	}
	return fmt.Sprintf("user %s on >%s ~* &* +@all\n", sentinelLinkUserName, c.sentinelLink)
}

// sentinelAuthConfig is what a fresh Sentinel reads on its standard input
// with a password: its ACL (the run's user, or the default user, with the
// run's password; and the link user), and the credentials it logs in to
// the servers (sentinel auth-user, auth-pass) and the other Sentinels
// (sentinel sentinel-user, sentinel-pass) with: the link user's. Sentinel
// rewrites ACL users into its config with their passwords hashed, but link
// passwords in clear: the run's password is never in a file, the link's
// only until Stop (scrubSentinelConf). "" without a password.
func (c *Cluster) sentinelAuthConfig() string {
	s := c.opts.Security
	if s.Password == "" || c.sentinelLink == "" {
		return ""
	}
	var b strings.Builder
	if s.Username != "" {
		fmt.Fprintf(&b, "user default off\nuser %s on >%s ~* &* +@all\n", s.Username, s.Password)
	} else {
		fmt.Fprintf(&b, "user default on >%s ~* &* +@all\n", s.Password)
	}
	b.WriteString(c.sentinelLinkUser())
	m := DefaultMasterName
	fmt.Fprintf(&b, "sentinel auth-user %s %s\nsentinel auth-pass %s %s\n", m, sentinelLinkUserName, m, c.sentinelLink)
	fmt.Fprintf(&b, "sentinel sentinel-user %s\nsentinel sentinel-pass %s\n", sentinelLinkUserName, c.sentinelLink)
	return b.String()
}

// scrubSentinelConf rewrites the config of each stopped Sentinel with its
// credentials redacted: the link password (sentinel auth-pass,
// sentinel-pass) and the hashes of the ACL users' passwords. It runs at
// Stop, after the Sentinels are dead, for a Dir that outlives the run.
func (c *Cluster) scrubSentinelConf() error {
	if c.sentinelLink == "" {
		return nil
	}
	var errs []error
	for _, s := range c.sentinels {
		p := filepath.Join(s.dir, "sentinel.conf")
		b, err := os.ReadFile(p)
		if err != nil {
			if !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("cluster: scrub %s: %w", p, err))
			}
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			f := strings.Fields(l)
			switch {
			case len(f) >= 3 && f[0] == "user":
				lines[i] = "# user " + f[1] + " [redacted]"
			case len(f) >= 3 && f[0] == "sentinel" && (f[1] == "auth-pass" || f[1] == "sentinel-pass"):
				lines[i] = "# sentinel " + f[1] + " [redacted]"
			}
		}
		text := c.opts.Security.Redact(strings.ReplaceAll(strings.Join(lines, "\n"), c.sentinelLink, "[redacted]"))
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			errs = append(errs, fmt.Errorf("cluster: scrub %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// sentinelMaster returns the fields of SENTINEL MASTER <name> on sentinel s.
func (s *Node) sentinelMaster(ctx context.Context) (map[string]string, error) {
	v, err := s.do(ctx, "SENTINEL", "MASTER", DefaultMasterName)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	switch v := v.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			m[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
		}
	case map[any]any:
		for k, x := range v {
			m[fmt.Sprint(k)] = fmt.Sprint(x)
		}
	default:
		return nil, fmt.Errorf("unexpected SENTINEL MASTER reply %T", v)
	}
	return m, nil
}

// waitSentinelsDiscovered waits until every Sentinel sees the primary as
// master with all replicas and the other Sentinels: before that a failover
// cannot gather its quorum (Sentinels find each other through hello
// messages every 2 s).
func (c *Cluster) waitSentinelsDiscovered(ctx context.Context) error {
	others := strconv.Itoa(len(c.sentinels) - 1)
	replicas := strconv.Itoa(c.topo.Replicas)
	for _, s := range c.sentinels {
		err := poll(ctx, syncTimeout, s.name+" discovering replicas and sentinels", func() (bool, error) {
			m, err := s.sentinelMaster(ctx)
			if err != nil {
				return false, err
			}
			return m["flags"] == "master" && m["num-slaves"] == replicas && m["num-other-sentinels"] == others, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// nodeByAddr returns the redis-server node listening on addr, or nil.
func (c *Cluster) nodeByAddr(addr string) *Node {
	for _, n := range c.nodes {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// Primary returns the current primary once: with Sentinels, the node a
// majority of Sentinels name (SENTINEL GET-MASTER-ADDR-BY-NAME) and that
// itself reports role master; without, the only running node reporting role
// master (an error if there are none or several). For Single and
// Independent topologies it returns an error.
func (c *Cluster) Primary(ctx context.Context) (*Node, error) {
	if c.topo.Kind != Replicated {
		return nil, fmt.Errorf("cluster: no primary in a %s topology", c.topo.Kind)
	}
	var cand *Node
	if len(c.sentinels) > 0 {
		votes := map[string]int{}
		for _, s := range c.sentinels {
			if !s.Running() {
				continue
			}
			v, err := s.do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", c.MasterName())
			if err != nil {
				continue
			}
			if hp, ok := v.([]any); ok && len(hp) == 2 {
				votes[fmt.Sprint(hp[0])+":"+fmt.Sprint(hp[1])]++
			}
		}
		for addr, k := range votes {
			if k > len(c.sentinels)/2 {
				cand = c.nodeByAddr(addr)
			}
		}
		if cand == nil {
			return nil, fmt.Errorf("cluster: no majority of sentinels names a primary (votes %v)", votes)
		}
		if !cand.Running() {
			return nil, fmt.Errorf("cluster: sentinels name %s primary, but it is not running", cand.name)
		}
	} else {
		var masters []*Node
		for _, n := range c.nodes {
			if !n.Running() {
				continue
			}
			if r, err := n.Role(ctx); err == nil && r == "master" {
				masters = append(masters, n)
			}
		}
		if len(masters) != 1 {
			return nil, fmt.Errorf("cluster: %d running nodes report role master, want 1", len(masters))
		}
		cand = masters[0]
	}
	if r, err := cand.Role(ctx); err != nil || r != "master" {
		return nil, fmt.Errorf("cluster: %s is named primary but reports role %q (%v)", cand.name, r, err)
	}
	return cand, nil
}

// WaitPrimary polls Primary every 20 ms until it names a primary other than
// each node in not (e.g. the primary just killed), and returns it. It waits
// until ctx ends: with Sentinels a failover takes ~2-3 s after the primary
// dies (down-after 1 s + election + promotion).
func (c *Cluster) WaitPrimary(ctx context.Context, not ...*Node) (*Node, error) {
	var got *Node
	err := poll(ctx, time.Hour, "waiting for a primary", func() (bool, error) {
		p, err := c.Primary(ctx)
		if err != nil {
			return false, err
		}
		for _, x := range not {
			if p == x {
				return false, fmt.Errorf("primary is still %s", p.name)
			}
		}
		got = p
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	c.opts.Logf("cluster: primary is %s", got.name)
	return got, nil
}
