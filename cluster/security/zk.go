package security

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/internal/errs"
)

// ZooKeeper: lockbench authenticates with the digest scheme (Conn.AddAuth
// "digest" "user:password"; go-zookeeper speaks no SASL, so ZooKeeper's
// SASL/Kerberos logins are not supported) and gives every znode it
// creates an ACL that only that identity may use (ZKACL). ZooKeeper
// accepts any digest identity at login: a wrong password is refused only
// when a znode's ACL names another identity. TLS is go-zookeeper dialling
// through crypto/tls (ZKDialer) to a server's secureClientPort.

// ZKDefaultUser is the digest user lockbench authenticates as on
// ZooKeeper when a password is given without --user.
const ZKDefaultUser = "lockbench"

// ZKUser returns the digest user of s on ZooKeeper: Username, or
// ZKDefaultUser when it is empty.
func (s Security) ZKUser() string {
	if s.Username != "" {
		return s.Username
	}
	return ZKDefaultUser
}

// ZKAuth returns the scheme and credentials of Conn.AddAuth for s
// ("digest", "user:password"), or ok false without a password. The
// credentials hold the password: never print them.
func (s Security) ZKAuth() (scheme string, cred []byte, ok bool) {
	if s.Password == "" {
		return "", nil, false
	}
	return "digest", []byte(s.ZKUser() + ":" + s.Password), true
}

// ZKACL returns the ACL of every znode lockbench creates on ZooKeeper
// (a lock's parent and its lock nodes): with a password, every
// permission for s's digest identity only (zk.DigestACL: the server keeps
// a salted hash, never the password), so that another identity can
// neither read, create under nor delete them; without one,
// world:anyone with every permission, as before.
func (s Security) ZKACL() []zk.ACL {
	if s.Password == "" {
		return zk.WorldACL(zk.PermAll)
	}
	return zk.DigestACL(zk.PermAll, s.ZKUser(), s.Password)
}

// ZKDialer returns a go-zookeeper dialer (for zk.WithDialer) that dials
// through dial (nil: a plain TCP dial) and, with TLS, completes a TLS
// handshake on the connection within the dial's timeout, with s's CA,
// client certificate and server name (default: the host dialled). A TLS
// configuration that cannot be loaded fails every dial with its error.
func (s Security) ZKDialer(dial zk.Dialer) zk.Dialer {
	if dial == nil {
		dial = func(network, addr string, timeout time.Duration) (net.Conn, error) {
			return (&net.Dialer{Timeout: timeout}).Dial(network, addr)
		}
	}
	if !s.TLS {
		return dial
	}
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		cfg, err := (&s).TLSConfig()
		if err != nil {
			return nil, err
		}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		raw, err := dial(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		c := tls.Client(raw, cfg)
		if err := c.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return c, nil
	}
}

// ZKAddAuth sends s's digest credentials on conn (Conn.AddAuth, which
// go-zookeeper sends again on every reconnect), waiting at most until ctx
// ends: the request waits for a session, which a server that refuses the
// TLS handshake never gives. Nothing without a password. The error never
// quotes the password.
func (s Security) ZKAddAuth(ctx context.Context, conn *zk.Conn) error {
	scheme, cred, ok := s.ZKAuth()
	if !ok {
		return nil
	}
	res := make(chan error, 1)
	go func() { res <- conn.AddAuth(scheme, cred) }()
	select {
	case err := <-res:
		if err != nil {
			return fmt.Errorf("ZooKeeper digest login as %s: %w", s.ZKUser(), s.RedactErr(err))
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ZooKeeper digest login as %s: no session by the deadline: %w", s.ZKUser(), ctx.Err())
	}
}

// ZooKeeperKeyStore writes, beside the server certificate GenerateCerts
// made (tls/server.pem and server.key), the PEM key store a ZooKeeper
// server reads (ssl.keyStore.type=PEM: the key in PKCS#8, then the
// certificate, in one file, readable by the owner only) and returns its
// path; ZooKeeper's trust store is CAFile. Call it after GenerateCerts.
func (s Security) ZooKeeperKeyStore() (string, error) {
	kb, err := os.ReadFile(s.serverKey())
	if err != nil {
		return "", fmt.Errorf("cluster: ZooKeeper key store: %w", err)
	}
	cert, err := os.ReadFile(s.serverCert())
	if err != nil {
		return "", fmt.Errorf("cluster: ZooKeeper key store: %w", err)
	}
	blk, _ := pem.Decode(kb)
	if blk == nil {
		return "", fmt.Errorf("cluster: ZooKeeper key store: %s holds no PEM key", s.serverKey())
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return "", fmt.Errorf("cluster: ZooKeeper key store: parse %s: %w", s.serverKey(), err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("cluster: ZooKeeper key store: encode key: %w", err)
	}
	out := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), cert...)
	path := filepath.Join(filepath.Dir(s.CAFile), "zookeeper-keystore.pem")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return "", fmt.Errorf("cluster: write %s: %w", path, err)
	}
	return path, nil
}

// ExplainZK turns a failed connection to the ZooKeeper server at addr
// under s into one line naming the server and the fix (an untrusted or
// misnamed certificate, TLS against a plain clientPort, a refused client
// certificate, a refused digest login), wrapping errs.ErrEnvironment;
// other errors come back as they are (the password redacted).
func (s Security) ExplainZK(addr string, err error) error {
	if err == nil {
		return nil
	}
	msg := s.Redact(err.Error())
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, zk.ErrAuthFailed):
		return fmt.Errorf("%w: ZooKeeper server %s refuses the digest login as %s: check --user and the password (and that the server's digest authentication provider is on)", errs.ErrEnvironment, addr, s.ZKUser())
	case errors.As(err, &unknownAuth) || strings.Contains(msg, "certificate signed by unknown authority"):
		return fmt.Errorf("%w: ZooKeeper server %s presents a certificate not signed by a trusted CA: give the CA's certificate in --tls-ca", errs.ErrEnvironment, addr)
	case errors.As(err, &hostErr) || strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "doesn't contain any IP SANs"):
		return fmt.Errorf("%w: ZooKeeper server %s presents a certificate for another name (%s): give the name it carries in --tls-server-name", errs.ErrEnvironment, addr, msg)
	case errors.As(err, &recordErr) || strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("%w: ZooKeeper server %s does not speak TLS (a plain clientPort): drop --tls, or give the server's secureClientPort", errs.ErrEnvironment, addr)
	case s.TLS && (strings.Contains(msg, "bad certificate") || strings.Contains(msg, "certificate required") || strings.Contains(msg, "unknown certificate")):
		return fmt.Errorf("%w: ZooKeeper server %s refuses the client certificate: give one its ssl.trustStore trusts in --tls-cert and --tls-key", errs.ErrEnvironment, addr)
	case s.TLS && (errors.Is(err, errPlainZK) || strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset")):
		return fmt.Errorf("%w: ZooKeeper server %s closed the connection at the TLS handshake (a plain clientPort?): drop --tls, or give the server's secureClientPort", errs.ErrEnvironment, addr)
	}
	if msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// errPlainZK marks a ZooKeeper port that answered a TLS ClientHello by
// closing the connection or not at all.
var errPlainZK = errors.New("no TLS handshake")

// zkProbeWait bounds each step of ProbeZK (the TLS handshake, the
// session, the login and a read).
const zkProbeWait = 3 * time.Second

// ProbeZK checks that the ZooKeeper server at addr serves a session as s
// before a run: with TLS, a TLS handshake (an untrusted certificate, a
// refused client certificate and a plain clientPort are named as such);
// then a session through ZKDialer, the digest login (ZKAddAuth) and a
// read of "/". A session that does not come without TLS is tested for a
// TLS port (a handshake that completes, certificates unchecked: "add
// --tls"). Errors are one line naming the server and the fix, wrapping
// errs.ErrEnvironment, never quoting the password. ctx bounds it.
//
// A wrong password is not detected here: ZooKeeper accepts any digest
// identity at login, and refuses it only on a znode whose ACL names
// another identity (see CheckZKKeys).
func (s Security) ProbeZK(ctx context.Context, addr string) error {
	if s.TLS {
		cfg, err := s.TLSConfig()
		if err != nil {
			return err
		}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		if err := handshake(ctx, addr, cfg); err != nil {
			if e := s.ExplainZK(addr, err); errors.Is(e, errs.ErrEnvironment) {
				return e
			}
			return fmt.Errorf("%w: ZooKeeper server %s: TLS handshake: %v (is it up, and is this its secureClientPort?)", errs.ErrEnvironment, addr, s.Redact(err.Error()))
		}
	}
	err := s.zkSession(ctx, addr)
	if err == nil {
		return nil
	}
	if e := s.ExplainZK(addr, err); errors.Is(e, errs.ErrEnvironment) {
		return e
	}
	if !s.TLS && speaksTLS(ctx, addr) {
		return fmt.Errorf("%w: ZooKeeper server %s speaks TLS (a secureClientPort): add --tls (with --tls-ca, and --tls-cert/--tls-key for the client certificate it demands), or give its plain clientPort", errs.ErrEnvironment, addr)
	}
	return fmt.Errorf("%w: ZooKeeper server %s gives no session: %v (is it up and serving a quorum? with TLS or a password, see --tls and --password-env)", errs.ErrEnvironment, addr, s.Redact(err.Error()))
}

// speaksTLS reports whether addr answers a TLS handshake (certificates
// unchecked): it completes, or the server answers with a TLS alert (a
// ZooKeeper secureClientPort demands a client certificate).
func speaksTLS(ctx context.Context, addr string) bool {
	err := handshake(ctx, addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only asks whether the port speaks TLS
	return err == nil || strings.Contains(err.Error(), "remote error: tls:")
}

// handshake dials addr and completes a TLS handshake with cfg within
// zkProbeWait; a server that closes the connection or says nothing is
// errPlainZK.
func handshake(ctx context.Context, addr string, cfg *tls.Config) error {
	hctx, cancel := context.WithTimeout(ctx, zkProbeWait)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(hctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer raw.Close()
	err = tls.Client(raw, cfg).HandshakeContext(hctx)
	switch {
	case err == nil:
		return nil
	case hctx.Err() != nil && ctx.Err() == nil:
		return fmt.Errorf("no answer to a TLS handshake within %v: %w", zkProbeWait, errPlainZK)
	case errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "connection reset"):
		return fmt.Errorf("%v: %w", err, errPlainZK)
	}
	return err
}

// zkSession opens a session on addr through ZKDialer, logs in and reads
// "/", each within zkProbeWait.
func (s Security) zkSession(ctx context.Context, addr string) error {
	var mu sync.Mutex
	var lastDial error
	base := func(network, a string, timeout time.Duration) (net.Conn, error) {
		c, err := s.ZKDialer(nil)(network, a, timeout)
		if err != nil {
			mu.Lock()
			lastDial = err
			mu.Unlock()
		}
		return c, err
	}
	// go-zookeeper reports StateDisconnected after a connect whose
	// handshake failed (a server that closed the connection): no need to
	// wait for the next attempt.
	connected, dropped := make(chan struct{}), make(chan struct{})
	var sawSession, sawDrop bool // the event loop's only
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZK{}),
		zk.WithDialer(base), zk.WithEventCallback(func(ev zk.Event) {
			switch {
			case ev.Type != zk.EventSession:
			case ev.State == zk.StateHasSession && !sawSession:
				sawSession = true
				close(connected)
			case ev.State == zk.StateDisconnected && !sawSession && !sawDrop:
				sawDrop = true
				close(dropped)
			}
		}))
	if err != nil {
		return err
	}
	defer conn.Close()
	wctx, cancel := context.WithTimeout(ctx, zkProbeWait)
	defer cancel()
	select {
	case <-connected:
	case <-dropped:
		mu.Lock()
		defer mu.Unlock()
		if lastDial != nil {
			return lastDial
		}
		return errors.New("the server closed the connection before giving a session")
	case <-wctx.Done():
		mu.Lock()
		defer mu.Unlock()
		if lastDial != nil {
			return lastDial
		}
		return fmt.Errorf("no session within %v", zkProbeWait)
	}
	if err := s.ZKAddAuth(wctx, conn); err != nil {
		return err
	}
	res := make(chan error, 1)
	go func() {
		_, _, err := conn.Exists("/")
		res <- err
	}()
	select {
	case err := <-res:
		return err
	case <-wctx.Done():
		return fmt.Errorf("no answer to exists / within %v", zkProbeWait)
	}
}

// quietZK discards go-zookeeper's log lines.
type quietZK struct{}

// Printf discards a log line.
func (quietZK) Printf(string, ...any) {}

// CheckZKKeys checks, before a run on the external backend, that the
// znodes a run's keys would use (the children of "/" whose names start
// with prefix, which an earlier run left) let s's identity in: a parent
// whose ACL names another digest identity refuses every lock node under
// it (NoAuth). That is the one place a wrong password shows: ZooKeeper
// accepts any digest identity at login. It returns one line naming the
// server, the znode and the fix, wrapping errs.ErrEnvironment; nothing
// when no such znode exists. ctx bounds it.
func (s Security) CheckZKKeys(ctx context.Context, addr, prefix string) error {
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZK{}), zk.WithDialer(s.ZKDialer(nil)))
	if err != nil {
		return err
	}
	defer conn.Close()
	wctx, cancel := context.WithTimeout(ctx, 2*zkProbeWait)
	defer cancel()
	if err := s.ZKAddAuth(wctx, conn); err != nil {
		return s.ExplainZK(addr, err)
	}
	res := make(chan error, 1)
	go func() {
		children, _, err := conn.Children("/")
		if err != nil {
			res <- err
			return
		}
		for _, c := range children {
			if !strings.HasPrefix(c, prefix) {
				continue
			}
			if _, _, err := conn.Children("/" + c); errors.Is(err, zk.ErrNoAuth) {
				res <- fmt.Errorf("%w: ZooKeeper server %s refuses the znode /%s to %s (NoAuth: its ACL names another digest identity, left by an earlier run): check --user and the password (--password-env/--password-file), or delete /%s as its owner, or use another --key-prefix", errs.ErrEnvironment, addr, c, s.zkIdentity(), c)
				return
			} else if err != nil && !errors.Is(err, zk.ErrNoNode) {
				res <- err
				return
			}
		}
		res <- nil
	}()
	select {
	case err := <-res:
		if err != nil && !errors.Is(err, errs.ErrEnvironment) {
			return fmt.Errorf("%w: ZooKeeper server %s: read the znodes under %q: %v", errs.ErrEnvironment, addr, "/"+prefix, s.Redact(err.Error()))
		}
		return err
	case <-wctx.Done():
		return fmt.Errorf("%w: ZooKeeper server %s: no answer reading / within %v", errs.ErrEnvironment, addr, 2*zkProbeWait)
	}
}

// zkIdentity names the identity s logs in as: "digest user NAME", or
// "an unauthenticated client" without a password.
func (s Security) zkIdentity() string {
	if s.Password == "" {
		return "an unauthenticated client (no password given)"
	}
	return "digest user " + s.ZKUser()
}
