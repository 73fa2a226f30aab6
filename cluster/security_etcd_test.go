package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/leakcheck"
)

// TestSecurityEtcd starts etcd:3 on the process backend with client and
// peer TLS and an etcd user (app) with a password, and etcd:1 with root's
// password in plain text, and checks: a client with the cluster's Security
// writes and reads; Leader answers (its status calls carry a token) and
// still does after the leader is killed and restarted; ProbeEtcd accepts
// the right Security and refuses, in one line naming the endpoint and the
// fix, a wrong password, none, an untrusted CA, TLS against the plain
// member and plain text against the TLS one; the password is in no file of
// the cluster's folder (etcd's WAL and database included) and no command
// line.
func TestSecurityEtcd(t *testing.T) {
	leakcheck.AtEnd(t)
	tlsC := startT(t, Topology{Kind: Etcd}, Options{Security: security.Security{Username: "app", Password: plantedSecret, TLS: true}})
	plain := startT(t, Topology{Kind: Etcd, Nodes: 1}, Options{Security: security.Security{Password: plantedSecret}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sec := tlsC.Security()
	if sec.CAFile == "" || sec.CertFile == "" {
		t.Fatalf("Security() = %v; want generated TLS files", sec)
	}
	for _, c := range []*Cluster{tlsC, plain} {
		cli, err := clientv3.New(*c.Security().ApplyEtcd(&clientv3.Config{Endpoints: c.Addrs(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()}))
		if err != nil {
			t.Fatalf("%s: etcd client with the cluster's Security: %v", c.Topology(), err)
		}
		if _, err := cli.Put(ctx, "lb:k0", "v"); err != nil {
			t.Errorf("%s: Put with the cluster's Security: %v", c.Topology(), err)
		}
		cli.Close()
	}
	// Leader, and again after the leader is killed and restarted (the
	// restarted member has lost the status calls' token).
	l := waitLeader(t, tlsC, nil, 5*time.Second)
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, tlsC, l, 10*time.Second)
	if err := l.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := tlsC.WaitQuorum(ctx, 15*time.Second); err != nil {
		t.Fatalf("quorum after the restart: %v", err)
	}

	tlsAddr, plainAddr := tlsC.Addrs()[0], plain.Addrs()[0]
	if _, err := sec.ProbeEtcd(ctx, tlsAddr, "lb:"); err != nil {
		t.Errorf("ProbeEtcd with the cluster's Security: %v", err)
	}
	if _, err := plain.Security().ProbeEtcd(ctx, plainAddr, "lb:"); err != nil {
		t.Errorf("ProbeEtcd of the plain member as root: %v", err)
	}
	wrongPW := sec
	wrongPW.Password = "not-the-password"
	noPW := sec
	noPW.Username, noPW.Password = "", ""
	noCA := security.Security{Username: "app", Password: plantedSecret, TLS: true, CertFile: sec.CertFile, KeyFile: sec.KeyFile}
	for _, tc := range []struct {
		name, addr string
		sec        security.Security
		want       string
	}{
		{"wrong password", tlsAddr, wrongPW, "refuses user app and the password"},
		{"no password", tlsAddr, noPW, "has authentication enabled"},
		{"no password, no TLS", plainAddr, security.Security{}, "has authentication enabled"},
		{"untrusted CA", tlsAddr, noCA, "--tls-ca"},
		{"no client certificate", tlsAddr, security.Security{Username: "app", Password: plantedSecret, TLS: true, CAFile: sec.CAFile}, "refuses the client certificate"},
		{"plain against TLS", tlsAddr, security.Security{Username: "app", Password: plantedSecret}, "add --tls"},
		{"TLS against plain", plainAddr, security.Security{Password: plantedSecret, TLS: true, CAFile: sec.CAFile}, "does not speak TLS"},
		{"wrong root password", plainAddr, security.Security{Password: "nope"}, "refuses user root"},
	} {
		start := time.Now()
		_, err := tc.sec.ProbeEtcd(ctx, tc.addr, "lb:")
		if err == nil {
			t.Errorf("%s: ProbeEtcd succeeded", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.addr) || !errors.Is(err, ErrEnvironment) || strings.Contains(msg, "\n") {
			t.Errorf("%s: ProbeEtcd = %q; want one line wrapping ErrEnvironment naming %s and %q", tc.name, msg, tc.addr, tc.want)
		}
		if strings.Contains(msg, plantedSecret) {
			t.Errorf("%s: error quotes the password", tc.name)
		}
		t.Logf("%s (%v): %s", tc.name, time.Since(start).Round(time.Millisecond), msg)
	}
	for _, c := range []*Cluster{tlsC, plain} {
		assertNoSecret(t, c.Dir())
		for _, n := range c.Nodes() {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.PID()))
			if strings.Contains(string(b), plantedSecret) {
				t.Errorf("%s's command line holds the password", n.Name())
			}
		}
	}
}
