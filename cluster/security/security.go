// Package security is how lockbench authenticates to Redis servers and
// etcd members and encrypts its connections to them (Security: a user and
// password, TLS; Apply* for each client library), how an adapter process
// receives it (Environ, FromEnv), how a password is read (ReadPassword),
// and the one-line explanation of a connection refused for it
// (Security.Explain, Security.ExplainEtcd, Security.ProbeEtcd). The servers lockbench
// starts get their side of it from the same value (ServerAuthConfig,
// ServerTLSArgs, GenerateCerts). Both the cluster and the strategies use
// it; it never prints the password.
package security

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/errs"
)

// Security is how lockbench authenticates to Redis servers and etcd
// members and encrypts its connections to them: a user and password
// (Redis's AUTH, etcd's Authenticate: see EtcdUser), and TLS with a CA, a
// client certificate and key, and a server name. The zero value is
// a plain, unauthenticated connection, as before.
//
// The password is a secret: lockbench reads it from an environment
// variable or a file (never a flag value, which lands in shell history),
// and Security never prints it: String, GoString and MarshalJSON redact
// it, and the errors of this package never quote it. On the process
// backend the servers receive it on their standard input (redis-server's
// `-` config argument), never on their command line or in a file.
type Security struct {
	// Username is the ACL user (AUTH username password); "" is Redis's
	// "default" user (AUTH password).
	Username string
	// Password is the user's password; "" sends no AUTH.
	Password string
	// PasswordFlag is where the password came from as lockbench's flags
	// say it (e.g. "--password-env LB_PW"), for a reproduce
	// command; never the password.
	PasswordFlag string
	// TLS turns TLS on for every connection to a Redis server,
	// Sentinel or etcd member (etcd: see cluster's process backend). On the process backend the servers listen with TLS only
	// (--tls-port, --port 0) on certificates generated for the run, and
	// CAFile, CertFile and KeyFile must be empty (they are filled by
	// Start: see Cluster.Security).
	TLS bool
	// CAFile is a PEM file of the CA certificates the servers' certificates
	// must chain to; "" trusts the system's roots.
	CAFile string
	// CertFile and KeyFile are the client certificate and its key (PEM),
	// for servers that demand one (tls-auth-clients yes); both or neither.
	CertFile, KeyFile string
	// ServerName is the name the servers' certificates must carry; "" is
	// the host of each address dialled.
	ServerName string

	cfg *tls.Config // built by load from the files above
}

// redacted stands for the password wherever Security is printed.
const redacted = "[redacted]"

// Enabled reports whether s asks for AUTH or TLS.
func (s Security) Enabled() bool { return s.Password != "" || s.Username != "" || s.TLS }

// String describes s without its password, e.g. "user app, password
// [redacted], TLS (CA ca.pem, client certificate c.pem)".
func (s Security) String() string {
	var parts []string
	if s.Username != "" {
		parts = append(parts, "user "+s.Username)
	}
	if s.Password != "" {
		parts = append(parts, "password "+redacted)
	}
	if s.TLS {
		var t []string
		if s.CAFile != "" {
			t = append(t, "CA "+s.CAFile)
		}
		if s.CertFile != "" {
			t = append(t, "client certificate "+s.CertFile)
		}
		if s.ServerName != "" {
			t = append(t, "server name "+s.ServerName)
		}
		if len(t) > 0 {
			parts = append(parts, "TLS ("+strings.Join(t, ", ")+")")
		} else {
			parts = append(parts, "TLS")
		}
	}
	if len(parts) == 0 {
		return "plain"
	}
	return strings.Join(parts, ", ")
}

// GoString is String, so that %#v redacts the password too.
func (s Security) GoString() string { return "security.Security{" + s.String() + "}" }

// MarshalJSON writes s without its password (a results file or log that
// marshals Options never holds it).
func (s Security) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%q", s.String())), nil
}

// load builds the TLS configuration from the files (once); errors name
// the file and wrap errs.ErrEnvironment.
func (s *Security) load() error {
	if !s.TLS || s.cfg != nil {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return fmt.Errorf("%w: TLS CA file: %v (give a readable PEM file in --tls-ca)", errs.ErrEnvironment, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%w: TLS CA file %s holds no PEM certificate (give the CA's certificate in --tls-ca)", errs.ErrEnvironment, s.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (s.CertFile == "") != (s.KeyFile == "") {
		return fmt.Errorf("TLS: give both a client certificate and its key (--tls-cert and --tls-key), or neither")
	}
	if s.CertFile != "" {
		c, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
		if err != nil {
			return fmt.Errorf("%w: TLS client certificate %s and key %s: %v (give a matching PEM pair in --tls-cert and --tls-key)", errs.ErrEnvironment, s.CertFile, s.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	s.cfg = cfg
	return nil
}

// TLSConfig returns the TLS configuration of s (a copy; nil without TLS).
// It reads the files on first use; errors wrap errs.ErrEnvironment.
func (s *Security) TLSConfig() (*tls.Config, error) {
	if !s.TLS {
		return nil, nil
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s.cfg.Clone(), nil
}

// Apply sets o's Username, Password and TLSConfig from s and returns o. A
// TLS configuration that cannot be loaded leaves TLSConfig nil (the dial
// then fails against a TLS port); Start loads it first and reports such
// errors.
func (s Security) Apply(o *redis.Options) *redis.Options {
	o.Username, o.Password = s.Username, s.Password
	if s.TLS {
		o.TLSConfig, _ = (&s).TLSConfig()
	}
	return o
}

// ApplyFailover is Apply for a Sentinel client: the same user, password
// and TLS for the primary and the Sentinels.
func (s Security) ApplyFailover(o *redis.FailoverOptions) *redis.FailoverOptions {
	o.Username, o.Password = s.Username, s.Password
	o.SentinelUsername, o.SentinelPassword = s.Username, s.Password
	if s.TLS {
		o.TLSConfig, _ = (&s).TLSConfig()
	}
	return o
}

// ApplyCluster is Apply for a Redis Cluster client: the same user,
// password and TLS for every node it dials (the seeds and the nodes it
// learns from CLUSTER SLOTS).
func (s Security) ApplyCluster(o *redis.ClusterOptions) *redis.ClusterOptions {
	o.Username, o.Password = s.Username, s.Password
	if s.TLS {
		o.TLSConfig, _ = (&s).TLSConfig()
	}
	return o
}

// Environment variables through which adapters (exec: strategies) get
// the Security of a run: set only when used, the password only in the
// child's environment (docs/protocol.md).
const (
	EnvUsername   = "LOCKBENCH_REDIS_USERNAME"
	EnvPassword   = "LOCKBENCH_REDIS_PASSWORD"
	EnvTLS        = "LOCKBENCH_TLS"
	EnvCAFile     = "LOCKBENCH_TLS_CA"
	EnvCertFile   = "LOCKBENCH_TLS_CERT"
	EnvKeyFile    = "LOCKBENCH_TLS_KEY"
	EnvServerName = "LOCKBENCH_TLS_SERVER_NAME"
)

// FromEnv reads the Security an adapter process was given through
// the environment (Environ's variables); the zero Security when none is
// set.
func FromEnv() Security {
	return Security{
		Username: os.Getenv(EnvUsername), Password: os.Getenv(EnvPassword),
		TLS:    os.Getenv(EnvTLS) != "",
		CAFile: os.Getenv(EnvCAFile), CertFile: os.Getenv(EnvCertFile), KeyFile: os.Getenv(EnvKeyFile),
		ServerName: os.Getenv(EnvServerName),
	}
}

// Environ returns the environment entries ("NAME=value") that pass s to an
// adapter process: none for the zero value.
func (s Security) Environ() []string {
	var env []string
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add(EnvUsername, s.Username)
	add(EnvPassword, s.Password)
	if s.TLS {
		add(EnvTLS, "1")
		add(EnvCAFile, s.CAFile)
		add(EnvCertFile, s.CertFile)
		add(EnvKeyFile, s.KeyFile)
		add(EnvServerName, s.ServerName)
	}
	return env
}

// Redact returns text with every occurrence of s's password replaced by
// [redacted] (for text that may quote a server's or adapter's output).
func (s Security) Redact(text string) string {
	if s.Password == "" {
		return text
	}
	return strings.ReplaceAll(text, s.Password, redacted)
}

// RedactErr returns err with s's password replaced by [redacted] in its
// text; errors.Is and errors.As still see err. nil stays nil, and err
// comes back as it is when its text holds no password.
func (s Security) RedactErr(err error) error {
	if err == nil || s.Password == "" || !strings.Contains(err.Error(), s.Password) {
		return err
	}
	return redactedError{msg: s.Redact(err.Error()), err: err}
}

// redactedError is an error whose text has the password redacted.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// envName is what an environment variable's name may be (POSIX: letters,
// digits and _, not starting with a digit).
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ReadPassword returns the password named by exactly one of env (an
// environment variable's name) and file (a file whose first line is the
// password; a trailing newline is dropped). Neither: "". The error names
// the variable or file, never the value.
func ReadPassword(env, file string) (string, error) {
	switch {
	case env != "" && file != "":
		return "", errors.New("give the password in one place: --password-env or --password-file, not both")
	case env != "" && !envName.MatchString(env):
		// Not a variable's name: most likely the password itself,
		// typed where its variable's name goes. Never repeat it.
		return "", errors.New("--password-env takes the name of an environment variable (letters, digits and _), not the password: export the password in a variable and give its name, or use --password-file")
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			return "", fmt.Errorf("--password-env %s: the environment variable %s is not set or empty (export it, or give --password-file)", env, env)
		}
		return v, nil
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("--password-file: %v (give a readable file holding the password on its first line)", err)
		}
		defer f.Close()
		line, err := bufio.NewReader(f).ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if err == nil || errors.Is(err, io.EOF) {
				return "", fmt.Errorf("--password-file %s: the first line is empty (write the password on it)", file)
			}
			return "", fmt.Errorf("--password-file %s: %v", file, err)
		}
		return line, nil
	}
	return "", nil
}

// ServerAuthConfig returns the redis-server configuration lines that make a
// process-backend server require s's password (and a replica send it to
// its primary), for the server's standard input: the password never
// appears on a command line or in a file. Empty without a password.
func (s Security) ServerAuthConfig() string {
	if s.Password == "" {
		return ""
	}
	var lines []string
	if s.Username != "" {
		lines = append(lines, "user default off",
			fmt.Sprintf("user %s on >%s ~* &* +@all", s.Username, s.Password),
			"masteruser "+s.Username)
	} else {
		lines = append(lines, "requirepass "+s.Password)
	}
	lines = append(lines, "masterauth "+s.Password)
	return strings.Join(lines, "\n") + "\n"
}

// ServerTLSArgs returns the redis-server arguments that make a process-backend
// server listen with TLS only on port (the plain port closed), demand a
// client certificate its CA signed, and replicate over TLS; a Redis
// Cluster node (clusterBus) also speaks TLS on its cluster bus and
// announces its TLS port in CLUSTER NODES and CLUSTER SLOTS. None without
// TLS.
func (s Security) ServerTLSArgs(port int, clusterBus bool) []string {
	if !s.TLS {
		return nil
	}
	args := []string{
		"--port", "0",
		"--tls-port", strconv.Itoa(port),
		"--tls-cert-file", s.serverCert(),
		"--tls-key-file", s.serverKey(),
		"--tls-ca-cert-file", s.CAFile,
		"--tls-auth-clients", "yes",
		"--tls-replication", "yes",
	}
	if clusterBus {
		args = append(args, "--tls-cluster", "yes")
	}
	return args
}

// CLIArgs returns the redis-cli arguments that connect as s (--user, and
// --tls with the CA and client certificate) and the environment entry
// that carries the password (REDISCLI_AUTH, so that it never appears on
// redis-cli's command line). Both empty for the zero value.
func (s Security) CLIArgs() (args, env []string) {
	if s.Password != "" {
		env = append(env, "REDISCLI_AUTH="+s.Password)
		if s.Username != "" {
			args = append(args, "--user", s.Username)
		}
	}
	if s.TLS {
		args = append(args, "--tls")
		if s.CAFile != "" {
			args = append(args, "--cacert", s.CAFile)
		}
		if s.CertFile != "" {
			args = append(args, "--cert", s.CertFile, "--key", s.KeyFile)
		}
		if s.ServerName != "" {
			args = append(args, "--sni", s.ServerName)
		}
	}
	return args, env
}

// MigrateAuth returns the arguments MIGRATE needs to log in to its
// target as s: AUTH2 username password for an ACL user, AUTH password for
// the default user, none without a password. They hold the password:
// never print them.
func (s Security) MigrateAuth() []any {
	switch {
	case s.Password == "":
		return nil
	case s.Username != "":
		return []any{"AUTH2", s.Username, s.Password}
	}
	return []any{"AUTH", s.Password}
}

// ServerCertFiles returns the server certificate and key (PEM) that
// GenerateCerts writes beside the client's, for the servers of a
// process-backend run; "" without a CA file.
func (s Security) ServerCertFiles() (cert, key string) {
	if s.CAFile == "" {
		return "", ""
	}
	return s.serverCert(), s.serverKey()
}

// serverCert and serverKey are the server's certificate and key that
// GenerateCerts writes beside the client's.
func (s Security) serverCert() string { return filepath.Join(filepath.Dir(s.CAFile), "server.pem") }
func (s Security) serverKey() string  { return filepath.Join(filepath.Dir(s.CAFile), "server.key") }

// GenerateCerts makes, in dir/tls, a CA and, signed by it, a server and a
// client certificate (ECDSA P-256, valid for a day, the server's for
// 127.0.0.1 and localhost) for a process-backend run with TLS, and points
// s's CAFile, CertFile and KeyFile at them.
func (s *Security) GenerateCerts(dir string) error {
	d := filepath.Join(dir, "tls")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("cluster: make TLS folder: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("cluster: generate CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lockbench test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("cluster: make CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("cluster: parse CA certificate: %w", err)
	}
	if err := writePEM(filepath.Join(d, "ca.pem"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	leaf := func(name string, serial int64, usage []x509.ExtKeyUsage) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return fmt.Errorf("cluster: generate %s key: %w", name, err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "lockbench " + name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("cluster: make %s certificate: %w", name, err)
		}
		kb, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return fmt.Errorf("cluster: encode %s key: %w", name, err)
		}
		if err := writePEM(filepath.Join(d, name+".pem"), "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(filepath.Join(d, name+".key"), "EC PRIVATE KEY", kb)
	}
	// A replica presents the server certificate as its client certificate.
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if err := leaf("server", 2, both); err != nil {
		return err
	}
	if err := leaf("client", 3, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}); err != nil {
		return err
	}
	s.CAFile, s.CertFile, s.KeyFile = filepath.Join(d, "ca.pem"), filepath.Join(d, "client.pem"), filepath.Join(d, "client.key")
	s.cfg = nil
	return nil
}

// writePEM writes one PEM block to path, readable by the owner only.
func writePEM(path, typ string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("cluster: write %s: %w", path, err)
	}
	return nil
}

// Explain turns a failed connection to addr under s into one
// line naming the server and the fix (wrong password, untrusted
// certificate, TLS against a plain port or plain against a TLS port),
// wrapping errs.ErrEnvironment; other errors come back as they are. It never
// quotes the password.
func (s Security) Explain(addr string, err error) error {
	if err == nil {
		return nil
	}
	msg := s.Redact(err.Error())
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "invalid password") || strings.Contains(msg, "invalid username-password"):
		return fmt.Errorf("%w: %s refuses the password (WRONGPASS): check --user and the password in --password-env/--password-file", errs.ErrEnvironment, addr)
	case strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "Authentication required"):
		return fmt.Errorf("%w: %s requires a password (NOAUTH): give it with --password-env or --password-file (and --user for an ACL user)", errs.ErrEnvironment, addr)
	case strings.Contains(msg, "without any password configured") || strings.Contains(msg, "AUTH <password> called without"):
		return fmt.Errorf("%w: %s has no password set but one was given: drop --password-env/--password-file, or set requirepass on the server", errs.ErrEnvironment, addr)
	case errors.As(err, &unknownAuth) || strings.Contains(msg, "certificate signed by unknown authority"):
		return fmt.Errorf("%w: %s presents a certificate not signed by a trusted CA: give the CA's certificate in --tls-ca", errs.ErrEnvironment, addr)
	case errors.As(err, &hostErr) || strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "doesn't contain any IP SANs"):
		return fmt.Errorf("%w: %s presents a certificate for another name (%s): give the name it carries in --tls-server-name", errs.ErrEnvironment, addr, msg)
	case errors.As(err, &recordErr) || strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("%w: %s does not speak TLS (a plain port): drop --tls, or give the server's tls-port", errs.ErrEnvironment, addr)
	case s.TLS && (strings.Contains(msg, "bad certificate") || strings.Contains(msg, "certificate required")):
		return fmt.Errorf("%w: %s refuses the client certificate: give one its tls-ca-cert-file trusts in --tls-cert and --tls-key", errs.ErrEnvironment, addr)
	case !s.TLS && (strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset")):
		return fmt.Errorf("%w: %s closed the connection at once (a TLS port?): add --tls (and --tls-ca), or give the server's plain port", errs.ErrEnvironment, addr)
	}
	if msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// tlsHandshakeTimeout bounds ProbeTLS's handshake: a plain Redis port
// answers a TLS ClientHello with nothing (it waits for a line), so only a
// timeout tells it apart.
const tlsHandshakeTimeout = 2 * time.Second

// ProbeTLS checks, with TLS on, that the external server at addr
// completes a TLS handshake within 2 s; a server that connects but does
// not is taken for a plain port (one line with the fix, wrapping
// errs.ErrEnvironment). Without TLS it does nothing. ctx bounds it.
func (s Security) ProbeTLS(ctx context.Context, addr string) error {
	if !s.TLS {
		return nil
	}
	cfg, err := s.TLSConfig()
	if err != nil {
		return err
	}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(hctx, "tcp", addr)
	if err != nil {
		return s.Unreachable(addr, "a TCP connect", err)
	}
	defer raw.Close()
	if err := tls.Client(raw, cfg).HandshakeContext(hctx); err != nil {
		if hctx.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("%w: cluster: external server %s does not speak TLS (no handshake within %v: a plain port?): drop --tls, or give the server's tls-port", errs.ErrEnvironment, addr, tlsHandshakeTimeout)
		}
		return s.Unreachable(addr, "a TLS handshake", err)
	}
	return nil
}

// Unreachable is the error of an external server at addr that failed cmd
// (what lockbench asked, e.g. "INFO server") with err: the explanation of
// Explain when the failure is a password or certificate, else one line
// with the fix; it wraps errs.ErrEnvironment and never quotes the
// password.
func (s Security) Unreachable(addr, cmd string, err error) error {
	if e := s.Explain(addr, err); errors.Is(e, errs.ErrEnvironment) {
		return fmt.Errorf("cluster: external server: %w", e)
	}
	return fmt.Errorf("%w: cluster: external server %s does not answer %s: %v (is it up and reachable from here? with a password or TLS, see --password-env and --tls)", errs.ErrEnvironment, addr, cmd, s.Redact(err.Error()))
}
