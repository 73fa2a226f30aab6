package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/lockbench/lockbench/cluster/security"
)

// ZooKeeper with Options.Security on the process backend: with TLS each
// server listens on a secureClientPort only (no plain clientPort) through
// Netty (NettyServerCnxnFactory), on the run's generated certificates (a
// PEM key store and the CA as its PEM trust store; ZooKeeper demands a
// client certificate the CA signed). The quorum and election ports between
// the servers stay plain (loopback). A password needs nothing of the
// servers: the clients log in with the digest scheme and give their
// znodes a digest ACL (security.Security.ZKACL); the servers keep only the
// ACL's salted hash, so the password is never on a command line or in a
// file. Four-letter words (mntr, ruok) go over TLS to the secure port.

// zooKeeperTLSConfig returns the zoo.cfg lines that make a server listen
// for clients with TLS only on port, or "" without TLS.
func (c *Cluster) zooKeeperTLSConfig(port int) (string, error) {
	s := c.opts.Security
	if !s.TLS {
		return "", nil
	}
	ks, err := s.ZooKeeperKeyStore()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "secureClientPort=%d\nsecureClientPortAddress=127.0.0.1\n", port)
	b.WriteString("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n")
	fmt.Fprintf(&b, "ssl.keyStore.location=%s\nssl.keyStore.type=PEM\n", ks)
	fmt.Fprintf(&b, "ssl.trustStore.location=%s\nssl.trustStore.type=PEM\n", s.CAFile)
	return b.String(), nil
}

// fourLetterWord sends ZooKeeper's four-letter word w to addr (over TLS
// when sec says so) and returns the answer, all within timeout.
func fourLetterWord(ctx context.Context, addr, w string, timeout time.Duration, sec security.Security) ([]byte, error) {
	conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if sec.TLS {
		cfg, err := sec.TLSConfig()
		if err != nil {
			return nil, err
		}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		conn = tc
	}
	if _, err := conn.Write([]byte(w)); err != nil {
		return nil, err
	}
	return io.ReadAll(conn)
}
