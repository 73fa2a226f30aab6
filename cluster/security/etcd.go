package security

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/internal/errs"
)

// EtcdRoot is the etcd user a password without a user logs in as: etcd
// has no user without a name (Redis's "default"), and root is the one
// every etcd with auth enabled has.
const EtcdRoot = "root"

// EtcdUser returns the etcd user s logs in as: Username, or EtcdRoot when
// only a password is given; "" without a password (no authentication).
func (s Security) EtcdUser() string {
	switch {
	case s.Password == "":
		return ""
	case s.Username == "":
		return EtcdRoot
	}
	return s.Username
}

// ApplyEtcd sets c's Username, Password (EtcdUser and the password: the
// client authenticates once at clientv3.New and again when its token
// expires) and TLS (the endpoints stay host:port; clientv3 dials them with
// TLS when c.TLS is set) from s, and returns c. A TLS configuration that
// cannot be loaded leaves TLS nil, as Apply does; Start and ProbeEtcd load
// it first and report such errors.
func (s Security) ApplyEtcd(c *clientv3.Config) *clientv3.Config {
	c.Username, c.Password = s.EtcdUser(), s.Password
	if s.TLS {
		c.TLS, _ = (&s).TLSConfig()
	}
	return c
}

// etcdProbeTimeout bounds each step of ProbeEtcd.
const etcdProbeTimeout = 3 * time.Second

// ProbeEtcd checks that the external etcd member at endpoint (host:port)
// accepts s before a run: with TLS, a handshake with s's CA, client
// certificate and server name (a plain port, an untrusted certificate or
// a refused client certificate are named as such); without, that it
// answers GET /version in plain HTTP (a TLS port is named as such); then,
// through an etcd client with s's user and password, a count of the keys
// under prefix (a wrong password, a missing one, or a user that may not
// read prefix). Each failure is one line naming the endpoint and the fix,
// wrapping errs.ErrEnvironment; it never quotes the password. It returns
// the member's etcd version. ctx bounds it.
func (s Security) ProbeEtcd(ctx context.Context, endpoint, prefix string) (string, error) {
	if s.TLS {
		if err := s.etcdHandshake(ctx, endpoint); err != nil {
			return "", err
		}
	}
	version, err := s.EtcdVersion(ctx, endpoint, etcdProbeTimeout)
	if err != nil {
		if !s.TLS && etcdSpeaksTLS(ctx, endpoint) {
			return "", fmt.Errorf("%w: etcd %s speaks TLS (an https client URL): add --tls (and --tls-ca with its CA, --tls-cert and --tls-key if it demands a client certificate)", errs.ErrEnvironment, endpoint)
		}
		return "", fmt.Errorf("%w: etcd %s does not answer GET /version: %v (is it up and reachable from here?)", errs.ErrEnvironment, endpoint, s.Redact(err.Error()))
	}
	cctx, cancel := context.WithTimeout(ctx, etcdProbeTimeout)
	defer cancel()
	cli, err := clientv3.New(*s.ApplyEtcd(&clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: etcdProbeTimeout, Logger: zap.NewNop(), Context: cctx}))
	if err != nil {
		return "", s.ExplainEtcd(endpoint, fmt.Errorf("etcd %s: %w", endpoint, err))
	}
	defer cli.Close()
	if _, err := cli.Get(cctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		return "", s.ExplainEtcd(endpoint, fmt.Errorf("etcd %s: read the keys under %q: %w", endpoint, prefix, err))
	}
	return version, nil
}

// etcdHandshake is ProbeEtcd's TLS handshake with endpoint.
func (s Security) etcdHandshake(ctx context.Context, endpoint string) error {
	cfg, err := s.TLSConfig()
	if err != nil {
		return err
	}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(endpoint)
	}
	hctx, cancel := context.WithTimeout(ctx, etcdProbeTimeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(hctx, "tcp", endpoint)
	if err != nil {
		return fmt.Errorf("%w: etcd %s does not answer a TCP connect: %v (is it up and reachable from here?)", errs.ErrEnvironment, endpoint, err)
	}
	defer raw.Close()
	conn := tls.Client(raw, cfg)
	err = conn.HandshakeContext(hctx)
	if err == nil {
		// TLS 1.3: a server that refuses the client certificate says so
		// after the handshake, at the first read.
		_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, rerr := conn.Read(make([]byte, 1)); rerr != nil && !isTimeout(rerr) && !errors.Is(rerr, net.ErrClosed) {
			var alert tls.AlertError
			if errors.As(rerr, &alert) || strings.Contains(rerr.Error(), "certificate") {
				err = rerr
			}
		}
	}
	if err == nil {
		return nil
	}
	// A plain etcd port (http and gRPC on one listener) closes the
	// connection at a ClientHello; a TLS one would answer, or send an
	// alert.
	var alert tls.AlertError
	closed := !errors.As(err, &alert) && (errors.Is(err, io.EOF) || strings.Contains(err.Error(), "connection reset"))
	if closed || (hctx.Err() != nil && ctx.Err() == nil) {
		return fmt.Errorf("%w: etcd %s does not speak TLS (no TLS handshake: a plain http client URL?): drop --tls, or give an endpoint of its https client URLs", errs.ErrEnvironment, endpoint)
	}
	return s.ExplainEtcd(endpoint, err)
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// etcdSpeaksTLS reports whether endpoint completes a TLS handshake, its
// certificate unchecked: a plain client against a TLS port.
func etcdSpeaksTLS(ctx context.Context, endpoint string) bool {
	hctx, cancel := context.WithTimeout(ctx, etcdProbeTimeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(hctx, "tcp", endpoint)
	if err != nil {
		return false
	}
	defer raw.Close()
	// Only whether the server speaks TLS is asked: no data is exchanged.
	err = tls.Client(raw, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}).HandshakeContext(hctx) //nolint:gosec
	var alert tls.AlertError
	return err == nil || errors.As(err, &alert)
}

// EtcdVersion asks the etcd member at endpoint for its version (GET
// /version, which etcd answers without authentication), over TLS with s's
// configuration when s.TLS; timeout bounds it. The member answers before
// it has joined a quorum.
func (s Security) EtcdVersion(ctx context.Context, endpoint string, timeout time.Duration) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	scheme, client := "http://", http.DefaultClient
	if s.TLS {
		cfg, err := s.TLSConfig()
		if err != nil {
			return "", err
		}
		tr := &http.Transport{TLSClientConfig: cfg}
		defer tr.CloseIdleConnections()
		scheme, client = "https://", &http.Client{Transport: tr}
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, scheme+endpoint+"/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v struct {
		Server string `json:"etcdserver"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Server == "" {
		return "", fmt.Errorf("GET /version on %s: not etcd (%v)", endpoint, err)
	}
	return v.Server, nil
}

// ExplainEtcd turns a failed connection or call to the etcd member at
// endpoint under s into one line naming it and the fix (a wrong or
// missing user and password, a user that may not touch the keys, an
// untrusted certificate or one for another name, a refused client
// certificate, TLS against a plain port), wrapping errs.ErrEnvironment;
// other errors come back with the password redacted. It never quotes the
// password.
func (s Security) ExplainEtcd(endpoint string, err error) error {
	if err == nil {
		return nil
	}
	msg := s.Redact(err.Error())
	user := s.EtcdUser()
	switch {
	case strings.Contains(msg, "authentication failed, invalid user ID or password"):
		return fmt.Errorf("%w: etcd %s refuses user %s and the password (authentication failed): check --user (default %s) and the password in --password-env/--password-file", errs.ErrEnvironment, endpoint, user, EtcdRoot)
	case strings.Contains(msg, "user name is empty") || (user == "" && strings.Contains(msg, "invalid auth token")):
		return fmt.Errorf("%w: etcd %s has authentication enabled: give a user and its password (--user, and --password-env or --password-file)", errs.ErrEnvironment, endpoint)
	case user == "" && strings.Contains(msg, "permission denied"):
		// etcd took the client certificate's name for the user.
		return fmt.Errorf("%w: etcd %s has authentication enabled and the client certificate's name is no user that may touch lockbench's keys (permission denied): give a user and its password (--user, and --password-env or --password-file)", errs.ErrEnvironment, endpoint)
	case strings.Contains(msg, "permission denied"):
		return fmt.Errorf("%w: etcd %s: user %s may not read or write lockbench's keys (permission denied): grant it a role with readwrite on the key prefix (etcdctl role grant-permission ROLE --prefix readwrite PREFIX)", errs.ErrEnvironment, endpoint, user)
	}
	if e := s.Explain(endpoint, err); errors.Is(e, errs.ErrEnvironment) {
		// The certificate and TLS-versus-plain cases, named for etcd.
		line := strings.TrimPrefix(e.Error(), errs.ErrEnvironment.Error()+": ")
		line = strings.Replace(line, "give the server's tls-port", "give an endpoint of its https client URLs", 1)
		line = strings.Replace(line, "give the server's plain port", "give an endpoint of its http client URLs", 1)
		line = strings.Replace(line, "its tls-ca-cert-file trusts", "its --trusted-ca-file trusts", 1)
		return fmt.Errorf("%w: etcd %s", errs.ErrEnvironment, line)
	}
	if msg != err.Error() {
		return errors.New(msg)
	}
	return err
}
