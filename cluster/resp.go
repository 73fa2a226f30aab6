package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/cluster/security"
)

// rawInfo connects to addr, sends PING and then INFO server over raw RESP
// (no client library, no retries) and returns the INFO fields. It fails if
// the server does not answer +PONG (e.g. -LOADING while an AOF loads).
// Each call is bounded by ctx and by perTry. With sec it speaks TLS and
// sends AUTH first (an -ERR reply to AUTH is the error).
func rawInfo(ctx context.Context, addr string, perTry time.Duration, sec security.Security) (map[string]string, error) {
	d := net.Dialer{Timeout: perTry}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := raw
	defer func() { conn.Close() }()
	deadline := time.Now().Add(perTry)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := conn.SetDeadline(deadline); err != nil {
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
		tc := tls.Client(raw, cfg)
		conn = tc
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
	}
	r := bufio.NewReader(conn)
	if sec.Password != "" {
		if _, err := io.WriteString(conn, respCommand(authArgs(sec)...)); err != nil {
			return nil, err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line = strings.TrimSpace(line); line != "+OK" {
			return nil, fmt.Errorf("AUTH answered %q", strings.TrimPrefix(line, "-"))
		}
	}
	if _, err := io.WriteString(conn, "PING\r\n*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"); err != nil {
		return nil, err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return nil, fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "$") {
		return nil, fmt.Errorf("INFO answered %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("INFO answered %q", line)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return parseInfo(string(body)), nil
}

// authArgs is the AUTH command of sec: AUTH [username] password.
func authArgs(sec security.Security) []string {
	if sec.Username != "" {
		return []string{"AUTH", sec.Username, sec.Password}
	}
	return []string{"AUTH", sec.Password}
}

// respCommand encodes args as a RESP array of bulk strings.
func respCommand(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// parseInfo splits an INFO reply into its "field:value" pairs.
func parseInfo(s string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// errNotOurs means a server answered on the port but it is not the process
// we started (another program owns the port).
var errNotOurs = errors.New("another process answers on this port")
