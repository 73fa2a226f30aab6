package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/errs"
)

// backendFlags are the flags that choose where the Redis servers run,
// shared by run and bench.
type backendFlags struct {
	backend, image, masterName, keyPrefix string
	addrs, sentinelAddrs, clusterAddrs    []string
	etcdEndpoints, zkServers              []string
	allowDestructive, sharedKeys          bool
	// AUTH and TLS (security.Security): the password only through the
	// name of a variable or a file.
	user, passwordEnv, passwordFile string
	// The older, Redis-only names of user, passwordEnv and passwordFile.
	redisUser, redisPasswordEnv, redisPasswordFile string
	tls                                            bool
	tlsCA, tlsCert, tlsKey, tlsServerName          string
}

// add registers the flags on fl.
func (b *backendFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&b.backend, "backend", cluster.BackendAuto, "where Redis runs: auto (process if redis-server is on PATH, else docker), process, docker, external")
	fl.StringVar(&b.image, "redis-image", dockerd.DefaultImage, "Docker image of the docker backend; never pulled (build one: make docker-image, tag "+dockerd.LocalImage+")")
	fl.StringSliceVar(&b.addrs, "redis-addrs", nil, "external backend: the servers, host:port,... (node order; primary first)")
	fl.StringSliceVar(&b.clusterAddrs, "redis-cluster-addrs", nil, "external backend: seed nodes of a Redis Cluster, host:port,... (token-lua-cluster, token-lua-wait-cluster, watchdog-cluster, fenced-cluster, redislock-cluster; the other nodes are found with CLUSTER NODES)")
	fl.StringSliceVar(&b.sentinelAddrs, "sentinel-addrs", nil, "external backend: the Sentinels, host:port,...")
	fl.StringSliceVar(&b.etcdEndpoints, "etcd-endpoints", nil, "external backend: an etcd cluster's client endpoints, host:port,... (etcd-* strategies)")
	fl.StringSliceVar(&b.zkServers, "zk-servers", nil, "external backend: a ZooKeeper ensemble's servers, host:port,... without a chroot (zk-* strategies)")
	fl.StringVar(&b.masterName, "master-name", cluster.DefaultMasterName, "external backend: the name the Sentinels monitor the primary under")
	fl.BoolVar(&b.allowDestructive, "allow-destructive", false, "external backend: allow faults through Redis commands (DEBUG SLEEP, CLIENT PAUSE, REPLICAOF NO ONE) on your servers")
	fl.BoolVar(&b.sharedKeys, "shared-keys", false, "external backend: several lockbench processes contend on these keys at once: do not refuse keys already under --key-prefix, do not delete them after the run")
	fl.StringVar(&b.user, "user", "", "user to log in as (Redis: an ACL user, default Redis's default user; etcd: default root; ZooKeeper: the digest user, default lockbench); the process backend starts its servers with this user")
	fl.StringVar(&b.passwordEnv, "password-env", "", "name of the environment variable holding the servers' password (never the password itself); the process backend starts its servers requiring it")
	fl.StringVar(&b.passwordFile, "password-file", "", "file whose first line is the servers' password (instead of --password-env)")
	// The names these flags had when they were for Redis alone.
	fl.StringVar(&b.redisUser, "redis-user", "", "older name of --user")
	fl.StringVar(&b.redisPasswordEnv, "redis-password-env", "", "older name of --password-env")
	fl.StringVar(&b.redisPasswordFile, "redis-password-file", "", "older name of --password-file")
	fl.BoolVar(&b.tls, "tls", false, "connect to the servers (Redis, Sentinel, etcd, ZooKeeper) over TLS; the process backend starts its servers with TLS on certificates made for the run")
	fl.StringVar(&b.tlsCA, "tls-ca", "", "external backend with --tls: PEM file of the CA the servers' certificates chain to (default: the system's roots)")
	fl.StringVar(&b.tlsCert, "tls-cert", "", "external backend with --tls: client certificate (PEM), with --tls-key")
	fl.StringVar(&b.tlsKey, "tls-key", "", "external backend with --tls: the client certificate's key (PEM)")
	fl.StringVar(&b.tlsServerName, "tls-server-name", "", "external backend with --tls: the name the servers' certificates carry (default: each address's host)")
	fl.StringVar(&b.keyPrefix, "key-prefix", "lb:", "prefix of every key lockbench writes (lock keys PREFIXkN, fencing counters PREFIXkN:fence)")
}

// options validates the flags into cluster.Options, resolving auto, and
// returns with them what auto picked and why (for a "note:" line; "" when
// a backend was named); usage errors wrap errs.ErrUsage, a machine with
// no backend cluster.ErrEnvironment.
func (b *backendFlags) options(ctx context.Context) (o cluster.Options, note string, err error) {
	if strings.TrimSpace(b.keyPrefix) == "" {
		return o, "", fmt.Errorf("%w: --key-prefix must not be empty: lockbench touches only keys under its prefix", errs.ErrUsage)
	}
	switch b.backend {
	case cluster.BackendAuto, cluster.BackendProcess, cluster.BackendDocker, cluster.BackendExternal:
	default:
		return o, "", fmt.Errorf("%w: --backend %q (valid: auto, process, docker, external)", errs.ErrUsage, b.backend)
	}
	consensus := len(b.etcdEndpoints) > 0 || len(b.zkServers) > 0
	consensus = consensus || len(b.clusterAddrs) > 0 // another deployment than --redis-addrs
	ext := len(b.addrs) > 0 || len(b.sentinelAddrs) > 0 || b.allowDestructive || b.sharedKeys || consensus
	if b.backend == cluster.BackendExternal && len(b.addrs) == 0 && !consensus {
		return o, "", fmt.Errorf("%w: --backend external needs --redis-addrs host:port,... (the servers of your deployment; --redis-cluster-addrs for a Redis Cluster, --etcd-endpoints or --zk-servers for the etcd and ZooKeeper strategies)", errs.ErrUsage)
	}
	if b.backend != cluster.BackendExternal && ext {
		return o, "", fmt.Errorf("%w: --redis-addrs, --redis-cluster-addrs, --sentinel-addrs, --etcd-endpoints, --zk-servers, --allow-destructive and --shared-keys go with --backend external", errs.ErrUsage)
	}
	b.clusterAddrs = trimAddrs(b.clusterAddrs)
	if err := checkAddrs(ctx, "--redis-cluster-addrs", b.clusterAddrs, "seed nodes of the Redis Cluster"); err != nil {
		return o, "", err
	}
	b.addrs, b.sentinelAddrs = trimAddrs(b.addrs), trimAddrs(b.sentinelAddrs)
	b.etcdEndpoints, b.zkServers = trimAddrs(b.etcdEndpoints), trimAddrs(b.zkServers)
	if err := checkAddrs(ctx, "--etcd-endpoints", b.etcdEndpoints, "etcd members"); err != nil {
		return o, "", err
	}
	if err := checkAddrs(ctx, "--zk-servers", b.zkServers, "ZooKeeper servers"); err != nil {
		return o, "", err
	}
	if err := checkAddrs(ctx, "--redis-addrs", b.addrs, "servers (a quorum strategy such as redlock needs 5 independent servers)"); err != nil {
		return o, "", err
	}
	if err := checkAddrs(ctx, "--sentinel-addrs", b.sentinelAddrs, "Sentinels"); err != nil {
		return o, "", err
	}
	o.Image = b.image
	name, note, err := cluster.ResolveBackend(ctx, b.backend, o)
	if err != nil {
		return o, "", err
	}
	o.Backend = name
	if b.image != dockerd.DefaultImage && name != cluster.BackendDocker {
		return o, "", fmt.Errorf("%w: --redis-image goes with --backend docker (the %s backend runs no image)", errs.ErrUsage, name)
	}
	o.Image = ""
	sec, err := b.security(name)
	if err != nil {
		return o, "", err
	}
	o.Security = sec
	switch name {
	case cluster.BackendDocker:
		o.Image = b.image
	case cluster.BackendExternal:
		o.External = cluster.External{Addrs: b.addrs, ClusterAddrs: b.clusterAddrs, SentinelAddrs: b.sentinelAddrs, MasterName: b.masterName, AllowDestructive: b.allowDestructive,
			SharedKeys: b.sharedKeys, EtcdEndpoints: b.etcdEndpoints, ZooKeeperServers: b.zkServers}
	}
	return o, note, nil
}

// security validates the AUTH and TLS flags for backend name into a
// security.Security, reading the password from its variable or file.
// Usage errors wrap errs.ErrUsage and never quote the password.
func (b *backendFlags) security(name string) (security.Security, error) {
	var files []string
	for _, f := range []struct{ name, v string }{{"--tls-ca", b.tlsCA}, {"--tls-cert", b.tlsCert}, {"--tls-key", b.tlsKey}, {"--tls-server-name", b.tlsServerName}} {
		if f.v != "" {
			files = append(files, f.name)
		}
	}
	if len(files) > 0 && !b.tls {
		verb := "go"
		if len(files) == 1 {
			verb = "goes"
		}
		return security.Security{}, fmt.Errorf("%w: %s %s with --tls: add --tls, or drop %s", errs.ErrUsage, strings.Join(files, " and "), verb, strings.Join(files, " and "))
	}
	if (b.tlsCert == "") != (b.tlsKey == "") {
		return security.Security{}, fmt.Errorf("%w: give --tls-cert and --tls-key together (a client certificate and its key), or neither", errs.ErrUsage)
	}
	for _, alias := range []struct {
		v          *string
		old, name  string
		oldV, newN string
	}{
		{&b.user, "--redis-user", "--user", b.redisUser, b.user},
		{&b.passwordEnv, "--redis-password-env", "--password-env", b.redisPasswordEnv, b.passwordEnv},
		{&b.passwordFile, "--redis-password-file", "--password-file", b.redisPasswordFile, b.passwordFile},
	} {
		if alias.oldV == "" {
			continue
		}
		if alias.newN != "" && alias.newN != alias.oldV {
			return security.Security{}, fmt.Errorf("%w: %s and %s are the same flag (%s is its older name): give one", errs.ErrUsage, alias.name, alias.old, alias.old)
		}
		*alias.v = alias.oldV
	}
	pw, err := security.ReadPassword(b.passwordEnv, b.passwordFile)
	if err != nil {
		return security.Security{}, fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	if b.user != "" && pw == "" {
		return security.Security{}, fmt.Errorf("%w: --user %s needs a password: give --password-env or --password-file", errs.ErrUsage, b.user)
	}
	sec := security.Security{Username: b.user, Password: pw, TLS: b.tls, CAFile: b.tlsCA, CertFile: b.tlsCert, KeyFile: b.tlsKey, ServerName: b.tlsServerName}
	switch {
	case b.passwordEnv != "":
		sec.PasswordFlag = "--password-env " + quote(b.passwordEnv)
	case b.passwordFile != "":
		sec.PasswordFlag = "--password-file " + quote(b.passwordFile)
	}
	if !sec.Enabled() {
		return sec, nil
	}
	switch name {
	case cluster.BackendDocker:
		return sec, fmt.Errorf("%w: the docker backend starts its servers without AUTH or TLS: use --backend process (which starts them with a password and TLS) or --backend external", errs.ErrUsage)
	case cluster.BackendProcess:
		if len(files) > 0 {
			return sec, fmt.Errorf("%w: the process backend makes its own TLS certificates for the run: --tls-ca, --tls-cert, --tls-key and --tls-server-name go with --backend external", errs.ErrUsage)
		}
	}
	return sec, nil
}

// securityArgs are the AUTH and TLS flags of a reproduce command: the
// password only by where it comes from.
func securityArgs(s security.Security) string {
	var b strings.Builder
	if s.Username != "" {
		fmt.Fprintf(&b, " --user %s", quote(s.Username))
	}
	if s.PasswordFlag != "" {
		b.WriteString(" " + s.PasswordFlag)
	}
	if s.TLS {
		b.WriteString(" --tls")
		for _, f := range []struct{ flag, v string }{{"--tls-ca", s.CAFile}, {"--tls-cert", s.CertFile}, {"--tls-key", s.KeyFile}, {"--tls-server-name", s.ServerName}} {
			if f.v != "" {
				fmt.Fprintf(&b, " %s %s", f.flag, quote(f.v))
			}
		}
	}
	return b.String()
}

// trimAddrs returns addrs with the spaces around each address removed
// ("127.0.0.1:1, 127.0.0.1:2" is two addresses, not a host " 127.0.0.1").
func trimAddrs(addrs []string) []string {
	if addrs == nil {
		return nil
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = strings.TrimSpace(a)
	}
	return out
}

// checkAddrs checks the addresses of flag: each host:port with a port in
// 1..65535, none listed twice (the same server twice would count as two
// independent ones, and a quorum on it means nothing); what names what
// the addresses should be, for the fix. Two addresses are the same server
// when they are equal or when their hosts resolve (ctx bounds the lookup)
// to a common IP address with the same port, as localhost:6379 and
// 127.0.0.1:6379 do; ports compare as numbers (:016391 is :16391); a host
// that does not resolve is compared as written (the run names it when it
// does not answer). The same server under addresses no lookup relates
// (0.0.0.0 and 127.0.0.1) is caught by preflight.CheckExternal, which compares
// the servers' run_id. Errors wrap errs.ErrUsage.
func checkAddrs(ctx context.Context, flag string, addrs []string, what string) error {
	count := map[string]int{}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: %s: %q is not host:port (e.g. 127.0.0.1:6379)", errs.ErrUsage, flag, a)
		}
		count[a]++
	}
	for _, a := range addrs {
		if n := count[a]; n > 1 {
			return fmt.Errorf("%w: %s: %s is listed %d times; give %d distinct %s", errs.ErrUsage, flag, a, n, len(addrs), what)
		}
	}
	type endpoint struct{ ip, port string }
	seen := map[endpoint]string{} // resolved endpoint → the address first giving it
	for _, a := range addrs {
		host, p, _ := net.SplitHostPort(a)
		n, _ := strconv.Atoi(p)
		port := strconv.Itoa(n)
		ips := []string{host}
		if net.ParseIP(host) == nil {
			lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			if found, err := net.DefaultResolver.LookupHost(lctx, host); err == nil && len(found) > 0 {
				ips = found
			}
			cancel()
		}
		mine := map[endpoint]bool{}
		for _, ip := range ips {
			if p := net.ParseIP(ip); p != nil {
				ip = p.String()
			}
			e := endpoint{ip, port}
			if first, ok := seen[e]; ok && !mine[e] {
				return fmt.Errorf("%w: %s: %s and %s are the same server (%s); give %d distinct %s",
					errs.ErrUsage, flag, a, first, net.JoinHostPort(ip, port), len(addrs), what)
			}
			seen[e], mine[e] = a, true
		}
	}
	return nil
}
