package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/security"
)

// TestSecurityEtcdProcessRun: etcd-mutex's baseline on the process
// backend, etcd started with client and peer TLS and auth on (user app,
// the password from an environment variable), runs as expected; the
// planted password appears in no output file and not in lockbench's
// output, and the reproduce command names the variable, not the value.
func TestSecurityEtcdProcessRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, text := run(t, []string{"LB_TEST_PW=" + plantedSecret}, "run", "--strategy", "etcd-mutex", "--scenario", "baseline", "--backend", "process",
		"--tls", "--user", "app", "--password-env", "LB_TEST_PW",
		"--ttl", "1s", "--duration", "1500ms", "--clients", "3", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	assertNoSecret(t, out, text)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "--password-env LB_TEST_PW") || !strings.Contains(string(b), "--tls") || !strings.Contains(string(b), "--user app") {
		t.Errorf("results.json's reproduce command does not name --user app, --password-env LB_TEST_PW and --tls")
	}
}

// TestSecurityEtcdExternalRefusals: against real etcd members (one with
// root's password in plain text, one with TLS demanding a client
// certificate and user app), a missing or wrong password, TLS against the
// plain member, plain text against the TLS one and an untrusted
// certificate each exit 3 with one line naming the endpoint and the fix,
// writing nothing; the right password, CA and client certificate run
// etcd-mutex.
func TestSecurityEtcdExternalRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plain, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Etcd, Nodes: 1}, cluster.Options{Security: security.Security{Password: plantedSecret}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	tlsC, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Etcd, Nodes: 1}, cluster.Options{Security: security.Security{Username: "app", Password: plantedSecret, TLS: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tlsC.Stop()
	sec := tlsC.Security()
	env := []string{"LB_TEST_PW=" + plantedSecret, "LB_WRONG_PW=not-it"}
	base := []string{"run", "--strategy", "etcd-mutex", "--scenario", "baseline", "--backend", "external", "--ttl", "1s", "--duration", "3s", "--clients", "2"}
	p, s := plain.Addrs()[0], tlsC.Addrs()[0]
	files := []string{"--tls-ca", sec.CAFile, "--tls-cert", sec.CertFile, "--tls-key", sec.KeyFile}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no password", []string{"--etcd-endpoints", p}, 3, "has authentication enabled"},
		{"wrong password", []string{"--etcd-endpoints", p, "--password-env", "LB_WRONG_PW"}, 3, "refuses user root"},
		{"TLS against a plain member", []string{"--etcd-endpoints", p, "--password-env", "LB_TEST_PW", "--tls"}, 3, "does not speak TLS"},
		{"untrusted certificate", []string{"--etcd-endpoints", s, "--user", "app", "--password-env", "LB_TEST_PW", "--tls"}, 3, "--tls-ca"},
		{"plain against TLS", []string{"--etcd-endpoints", s, "--user", "app", "--password-env", "LB_TEST_PW"}, 3, "add --tls"},
		{"wrong password over TLS", append([]string{"--etcd-endpoints", s, "--user", "app", "--password-env", "LB_WRONG_PW", "--tls"}, files...), 3, "refuses user app"},
		{"TLS with CA and client certificate", append([]string{"--etcd-endpoints", s, "--user", "app", "--password-env", "LB_TEST_PW", "--tls"}, files...), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, text := runRefusal(t, env, slices.Concat(base, tc.args), tc.code, tc.want)
			if tc.code != 0 {
				if !strings.Contains(text, tc.args[1]) {
					t.Errorf("refusal %q does not name the endpoint %s", text, tc.args[1])
				}
				return
			}
			assertNoSecret(t, out, text)
		})
	}
}
