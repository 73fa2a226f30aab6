package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
)

// plantedSecret is the password the security tests start servers with and
// then look for in every error and file they can see.
const plantedSecret = "pl4nted-S3CRET-7f3a"

// TestSecurityProcessBackend starts real servers that require a password
// (an ACL user, and the default user) and TLS with a client certificate,
// and checks that a client with the cluster's Security gets through, and
// that a plain client, a wrong password and a client without the CA each
// fail with one line naming the server and the fix, never the password.
func TestSecurityProcessBackend(t *testing.T) {
	for _, tc := range []struct {
		name string
		topo Topology
		sec  security.Security
	}{
		{"acl-user-tls-replicated", Topology{Kind: Replicated, Replicas: 1}, security.Security{Username: "app", Password: plantedSecret, TLS: true}},
		{"requirepass-plain", Topology{Kind: Single}, security.Security{Password: plantedSecret}},
		{"tls-only", Topology{Kind: Single}, security.Security{TLS: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startT(t, tc.topo, Options{Security: tc.sec})
			ctx := ctxT(t)
			sec := c.Security()
			if tc.sec.TLS && (sec.CAFile == "" || sec.CertFile == "") {
				t.Fatalf("Security() = %v; want generated TLS files", sec)
			}
			rc := redis.NewClient(sec.Apply(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1}))
			defer rc.Close()
			if err := rc.Set(ctx, "lb:k0", "v", 0).Err(); err != nil {
				t.Fatalf("SET with the cluster's Security: %v", err)
			}
			if tc.topo.Kind == Replicated {
				if err := c.WaitReplicated(ctx); err != nil {
					t.Fatalf("replication with AUTH and TLS: %v", err)
				}
			}
			// Wrong ways in: each fails, with a message naming the fix.
			wrong := []struct {
				name string
				sec  security.Security
				want string
			}{
				{"plain", security.Security{}, ""},
			}
			if tc.sec.Password != "" {
				w := sec
				w.Password = "not-the-password"
				wrong = append(wrong, struct {
					name string
					sec  security.Security
					want string
				}{"wrong password", w, "refuses the password"})
			}
			if tc.sec.TLS {
				// The same without the CA (and without its loaded
				// configuration, which a copy would carry).
				w := security.Security{Username: sec.Username, Password: sec.Password, TLS: true,
					CertFile: sec.CertFile, KeyFile: sec.KeyFile, ServerName: sec.ServerName}
				wrong = append(wrong, struct {
					name string
					sec  security.Security
					want string
				}{"untrusted CA", w, "--tls-ca"})
			}
			addr := c.Nodes()[0].Addr()
			for _, w := range wrong {
				_, err := rawInfo(ctx, addr, ReadyTimeout, w.sec)
				if err == nil {
					t.Fatalf("%s: rawInfo succeeded", w.name)
				}
				e := w.sec.Explain(addr, err)
				msg := e.Error()
				if strings.Contains(msg, plantedSecret) || strings.Contains(msg, "\n") {
					t.Errorf("%s: error quotes the password or spans lines: %q", w.name, msg)
				}
				if w.want != "" && (!strings.Contains(msg, w.want) || !strings.Contains(msg, addr) || !errors.Is(e, ErrEnvironment)) {
					t.Errorf("%s: error %q; want ErrEnvironment naming %s and %q", w.name, msg, addr, w.want)
				}
			}
			// The password is in no file of the cluster's folder, nor in
			// the servers' command lines.
			assertNoSecret(t, c.Dir())
			for _, n := range c.Nodes() {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.PID()))
				if strings.Contains(string(b), plantedSecret) {
					t.Errorf("%s's command line holds the password", n.Name())
				}
			}
		})
	}
}

// assertNoSecret fails the test for every file under dir that holds
// plantedSecret.
func assertNoSecret(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), plantedSecret) {
			t.Errorf("%s holds the planted password", p)
		}
		return nil
	})
}

// TestSecurityRefusals: the docker backend, and TLS files given to the
// process backend are refused before anything starts.
func TestSecurityRefusals(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		topo Topology
		want string
	}{
		{Options{Backend: BackendDocker, Security: security.Security{Password: "x"}}, Topology{Kind: Single}, "docker backend"},
		{Options{Security: security.Security{TLS: true, CAFile: "ca.pem"}}, Topology{Kind: Single}, "makes its own TLS certificates"},
		{Options{Backend: BackendExternal, Security: security.Security{TLS: true, CertFile: "c.pem"}}, Topology{Kind: Single}, "both"},
	} {
		_, err := Start(context.Background(), tc.topo, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%s, %v) = %v; want an error with %q", tc.topo, tc.o.Security, err, tc.want)
		}
	}
}

// passwordHash is how Redis writes an ACL user's password into a config
// file it rewrites: its SHA-256 in hex after #.
var passwordHash = regexp.MustCompile(`#[0-9a-f]{64}`)

// TestSecuritySentinel starts replicated:1 watched by three Sentinels on
// the process backend, the servers and the Sentinels requiring a password
// (an ACL user over TLS everywhere, with a client certificate; and the
// default user in plain text), and checks that a go-redis failover client
// with ApplyFailover gets through the Sentinels to the primary, that
// Primary (SENTINEL GET-MASTER-ADDR-BY-NAME) answers, that the Sentinels
// fail over to the replica when the primary dies (their links to the
// servers and to each other log in and speak TLS), that a plain client
// and a wrong password are refused by a Sentinel with one line naming it
// and the fix, that the run's password is in no file and no command line,
// and that after Stop the Sentinels' configs hold no credential either.
func TestSecuritySentinel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sec      security.Security
		failover bool
	}{
		{"acl-user-tls", security.Security{Username: "app", Password: plantedSecret, TLS: true}, true},
		{"requirepass-plain", security.Security{Password: plantedSecret}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c, err := Start(ctxT(t), Topology{Kind: Replicated, Replicas: 1, Sentinels: 3}, Options{Security: tc.sec, Dir: dir, Logf: t.Logf})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer c.Stop()
			ctx := ctxT(t)
			sec := c.Security()
			fc := redis.NewFailoverClient(sec.ApplyFailover(&redis.FailoverOptions{MasterName: c.MasterName(), SentinelAddrs: c.SentinelAddrs(),
				DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1}))
			defer fc.Close()
			if err := fc.Set(ctx, "lb:k0", "v", 0).Err(); err != nil {
				t.Fatalf("SET through the Sentinels with the cluster's Security: %v", err)
			}
			if p, err := c.Primary(ctx); err != nil || p != c.Nodes()[0] {
				t.Fatalf("Primary = %v, %v; want n1", p, err)
			}
			link := c.sentinelLink
			if link == "" {
				t.Fatal("no link password made for the Sentinels")
			}
			wrongPW := sec
			wrongPW.Password = "not-the-password"
			s1 := c.Sentinels()[0].Addr()
			for _, w := range []struct {
				name string
				sec  security.Security
				want string
			}{{"plain", security.Security{}, ""}, {"wrong password", wrongPW, "refuses the password"}} {
				_, err := rawInfo(ctx, s1, ReadyTimeout, w.sec)
				if err == nil {
					t.Fatalf("%s: a Sentinel answered INFO", w.name)
				}
				e := w.sec.Explain(s1, err)
				if msg := e.Error(); strings.Contains(msg, plantedSecret) || strings.Contains(msg, "\n") ||
					w.want != "" && (!strings.Contains(msg, w.want) || !strings.Contains(msg, s1) || !errors.Is(e, ErrEnvironment)) {
					t.Errorf("%s: error %q; want one line naming %s and %q, without the password", w.name, msg, s1, w.want)
				}
			}
			if tc.failover {
				old := c.Nodes()[0]
				if err := old.Kill(); err != nil {
					t.Fatal(err)
				}
				wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
				p, err := c.WaitPrimary(wctx, old)
				cancel()
				if err != nil {
					t.Fatalf("the Sentinels did not fail over: %v", err)
				}
				if err := fc.Set(ctx, "lb:k0", "after", 0).Err(); err != nil {
					t.Errorf("SET through the Sentinels after the failover to %s: %v", p.Name(), err)
				}
			}
			assertNoSecret(t, dir)
			for _, n := range append(c.Sentinels(), c.Nodes()...) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.PID()))
				if strings.Contains(string(b), plantedSecret) || strings.Contains(string(b), link) {
					t.Errorf("%s's command line holds a password", n.Name())
				}
			}
			if err := c.Stop(); err != nil {
				t.Fatal(err)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				if b, err := os.ReadFile(p); err == nil && (strings.Contains(string(b), link) || passwordHash.Match(b)) {
					t.Errorf("%s holds the Sentinels' link password or a password hash after Stop", p)
				}
				return nil
			})
		})
	}
}

// TestSecurityRedisCluster starts redis-cluster:3+3 on the process
// backend requiring a password (an ACL user over TLS on the client
// port, the replication links and the cluster bus; and the default user
// in plain text) and checks that the cluster forms with every replica in
// sync, that a cluster client with ApplyCluster gets through, that
// MigrateSlot moves a key (MIGRATE with AUTH2 or AUTH) with its TTL and
// the client follows it, that a plain client and a wrong password are
// refused, and that the password is in no file and no command line.
func TestSecurityRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six redis-servers; skipped with -short")
	}
	for _, tc := range []struct {
		name string
		sec  security.Security
	}{
		{"acl-user-tls", security.Security{Username: "app", Password: plantedSecret, TLS: true}},
		{"requirepass-plain", security.Security{Password: plantedSecret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startT(t, Topology{Kind: RedisCluster}, Options{Security: tc.sec})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sec := c.Security()
			cc := redis.NewClusterClient(sec.ApplyCluster(&redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1}))
			defer cc.Close()
			const key = "lb:k0"
			if err := cc.Set(ctx, key, "tok", 20*time.Second).Err(); err != nil {
				t.Fatalf("SET through the cluster client with the cluster's Security: %v", err)
			}
			slot, err := c.KeySlot(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := c.SlotPrimary(ctx, slot)
			if err != nil {
				t.Fatal(err)
			}
			prims, err := c.Primaries(ctx)
			if err != nil || len(prims) != 3 {
				t.Fatalf("Primaries = %v, %v; want 3", prims, err)
			}
			to := prims[0]
			if to == p {
				to = prims[1]
			}
			if _, moved, err := c.MigrateSlot(ctx, slot, to); err != nil || moved != 1 {
				t.Fatalf("MigrateSlot(%d, %s) = %d keys, %v; want 1 key moved", slot, to.Name(), moved, err)
			}
			if err := c.WaitClusterOK(ctx); err != nil {
				t.Fatal(err)
			}
			if v, err := cc.Get(ctx, key).Result(); err != nil || v != "tok" {
				t.Errorf("GET %s after the migration = %q, %v; want tok", key, v, err)
			}
			rc := redis.NewClient(sec.Apply(&redis.Options{Addr: to.Addr(), MaxRetries: -1}))
			defer rc.Close()
			if ttl, err := rc.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > 20*time.Second {
				t.Errorf("PTTL %s on %s = %v, %v; want the TTL kept", key, to.Name(), ttl, err)
			}
			// Wrong ways in.
			wrongPW := sec
			wrongPW.Password = "not-the-password"
			for _, w := range []struct {
				name string
				sec  security.Security
				want string
			}{{"plain", security.Security{}, ""}, {"wrong password", wrongPW, "refuses the password"}} {
				addr := c.Nodes()[0].Addr()
				_, err := rawInfo(ctx, addr, ReadyTimeout, w.sec)
				if err == nil {
					t.Fatalf("%s: rawInfo succeeded", w.name)
				}
				msg := w.sec.Explain(addr, err).Error()
				if strings.Contains(msg, plantedSecret) || w.want != "" && !strings.Contains(msg, w.want) {
					t.Errorf("%s: error %q; want %q, without the password", w.name, msg, w.want)
				}
			}
			// A MIGRATE whose target refuses the password: the error
			// names the command, never the password.
			badPW := sec
			badPW.Password = plantedSecret + "-wrong"
			err = migrateKeys(ctx, to, p, []any{key}, badPW)
			if err == nil || !strings.Contains(err.Error(), "MIGRATE") || strings.Contains(err.Error(), plantedSecret) {
				t.Errorf("MIGRATE with a wrong password: %v; want an error naming MIGRATE, without the password", err)
			}
			t.Logf("MIGRATE with a wrong password: %v", err)
			assertNoSecret(t, c.Dir())
			for _, n := range c.Nodes() {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.PID()))
				if strings.Contains(string(b), plantedSecret) {
					t.Errorf("%s's command line holds the password", n.Name())
				}
			}
		})
	}
}
