package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/security"
)

// TestSecurityZooKeeper, against real ZooKeeper servers (Debian's 3.8 on
// the process backend): zk-lock's baseline runs on the process backend
// through TLS with a digest password from a variable; on the external
// backend, against a standalone server started with TLS and one without,
// TLS against the plain port, plain against the TLS port and an
// untrusted certificate each exit 3 with one line naming the server and
// the fix, writing nothing; the right CA, client certificate and
// password run, the lock's znode then carries a digest ACL that refuses
// another identity, and a run with a wrong password is refused (exit 3)
// at that znode. The planted password appears in no output.
func TestSecurityZooKeeper(t *testing.T) {
	if err := cluster.CheckTopology(cluster.Options{}, cluster.Topology{Kind: cluster.ZooKeeper}); err != nil {
		t.Skip(err)
	}
	env := []string{"LB_TEST_PW=" + plantedSecret, "LB_WRONG_PW=not-it"}
	t.Run("process backend", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		code, text := run(t, env, "run", "--strategy", "zk-lock", "--scenario", "baseline", "--backend", "process",
			"--tls", "--redis-password-env", "LB_TEST_PW", "--ttl", "1s", "--duration", "3s", "--clients", "4", "--out", out)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, text)
		}
		assertNoSecret(t, out, text)
		b, err := os.ReadFile(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "--redis-password-env LB_TEST_PW") || !strings.Contains(string(b), "--tls") {
			t.Errorf("results.json's reproduce command does not name --redis-password-env LB_TEST_PW and --tls")
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	one := cluster.Topology{Kind: cluster.ZooKeeper, Nodes: 1}
	plain, err := cluster.Start(ctx, one, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	tlsC, err := cluster.Start(ctx, one, cluster.Options{Security: security.Security{Password: plantedSecret, TLS: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tlsC.Stop()
	sec := tlsC.Security()
	good := []string{"--zk-servers", tlsC.Addrs()[0], "--redis-user", "app", "--redis-password-env", "LB_TEST_PW",
		"--tls", "--tls-ca", sec.CAFile, "--tls-cert", sec.CertFile, "--tls-key", sec.KeyFile}
	base := []string{"run", "--strategy", "zk-lock", "--scenario", "baseline", "--backend", "external", "--ttl", "1s", "--duration", "3s", "--clients", "2"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"TLS against a plain port", []string{"--zk-servers", plain.Addrs()[0], "--tls"}, 3, "plain clientPort"},
		{"plain against TLS", []string{"--zk-servers", tlsC.Addrs()[0], "--redis-password-env", "LB_TEST_PW"}, 3, "add --tls"},
		{"untrusted certificate", []string{"--zk-servers", tlsC.Addrs()[0], "--tls"}, 3, "--tls-ca"},
		{"TLS with CA, client certificate and password", good, 0, ""},
		// The znodes the run above left (the lock's parent) name app with
		// the right password: the wrong one is refused there.
		{"wrong password", append(append([]string{}, good[:4]...), append([]string{"--redis-password-env", "LB_WRONG_PW"}, good[6:]...)...), 3, "NoAuth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, text := runRefusal(t, env, slices.Concat(base, tc.args), tc.code, tc.want)
			if tc.code != 0 {
				if !strings.Contains(text, tc.args[1]) {
					t.Errorf("refusal does not name the server %s: %q", tc.args[1], text)
				}
				return
			}
			assertNoSecret(t, out, text)
		})
	}

	// The lock's parent znode carries app's digest ACL: another identity
	// (and no identity) is refused, app is let in.
	children := func(s security.Security) error {
		conn, _, err := zk.Connect(tlsC.Addrs(), 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZK{}),
			zk.WithDialer(s.ZKDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
				return (&net.Dialer{Timeout: timeout}).Dial(network, addr)
			})))
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := s.ZKAddAuth(ctx, conn); err != nil {
			return err
		}
		acl, _, err := conn.GetACL("/lb:k0")
		if err != nil {
			return err
		}
		if len(acl) != 1 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "app:") || acl[0].Perms != zk.PermAll {
			t.Errorf("ACL of /lb:k0 = %+v, want digest app:... with every permission", acl)
		}
		_, _, err = conn.Children("/lb:k0")
		return err
	}
	app := sec
	app.Username = "app"
	if err := children(app); err != nil {
		t.Errorf("app reading its lock's znode: %v", err)
	}
	other := app
	other.Username = "other"
	if err := children(other); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("another identity reading the lock's znode: %v, want %v", err, zk.ErrNoAuth)
	}
	none := app
	none.Username, none.Password = "", ""
	if err := children(none); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("no identity reading the lock's znode: %v, want %v", err, zk.ErrNoAuth)
	}
}

// quietZK discards go-zookeeper's log lines.
type quietZK struct{}

// Printf discards a log line.
func (quietZK) Printf(string, ...any) {}
