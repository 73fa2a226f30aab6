package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis starts a redis-server on a free loopback port with extra
// arguments (e.g. --enable-debug-command no), waits until it answers and
// returns its address and a client; the test's cleanup kills it.
func startRedis(t *testing.T, extra ...string) (string, *redis.Client) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	rc := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rc.Close() })
	deadline := time.Now().Add(5 * time.Second)
	for rc.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, rc
}

// TestExternalStaleKeys: keys already under the key prefix on an external
// server refuse the run (exit 2) naming the count, the server, a key and
// both fixes; a run under another prefix works, deletes its own keys, and
// so a second run with that prefix works too; the other keys stay. With
// --shared-keys (several lockbench machines on the same keys) a key under
// the prefix is no refusal and the run's keys stay.
func TestExternalStaleKeys(t *testing.T) {
	addr, rc := startRedis(t)
	ctx := context.Background()
	for _, k := range []string{"lb:k0", "lb:k0:fence", "app:user:1"} {
		if err := rc.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"run", "--strategy", "fenced", "--backend", "external", "--redis-addrs", addr, "--ttl", "50ms", "--duration", "300ms", "--clients", "4"}
	out := filepath.Join(t.TempDir(), "out")
	code, text := run(t, nil, append(base, "--out", out)...)
	want := fmt.Sprintf(`external: 2 keys under "lb:" already exist on %s (e.g. lb:k0): a stale lock reads as a deadlock; delete them (redis-cli -h 127.0.0.1 -p %s --scan --pattern 'lb:*'`, addr, addr[strings.LastIndex(addr, ":")+1:])
	if code != 2 || !strings.Contains(text, want) || !strings.Contains(text, "or pass another --key-prefix") {
		t.Fatalf("stale keys: exit %d, output %q; want exit 2 and %q", code, text, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused run made its --out %s", out)
	}
	for i := range 2 {
		code, text := run(t, nil, append(base, "--key-prefix", "lbtest:", "--out", t.TempDir())...)
		if code != 0 {
			t.Fatalf("run %d under a fresh prefix: exit %d:\n%s", i+1, code, text)
		}
		left, err := rc.Keys(ctx, "lbtest:*").Result()
		if err != nil || len(left) > 0 {
			t.Errorf("after run %d: keys under lbtest: left %v (%v); want none", i+1, left, err)
		}
	}
	if n, err := rc.Exists(ctx, "lb:k0", "lb:k0:fence", "app:user:1").Result(); err != nil || n != 3 {
		t.Errorf("keys lockbench did not write: %d of 3 left (%v)", n, err)
	}
	if err := rc.Set(ctx, "lbshared:other", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, append(base, "--key-prefix", "lbshared:", "--shared-keys", "--out", t.TempDir())...); code != 0 {
		t.Fatalf("--shared-keys over a key under the prefix: exit %d:\n%s", code, text)
	}
	if n, err := rc.Exists(ctx, "lbshared:other", "lbshared:k0:fence").Result(); err != nil || n != 2 {
		t.Errorf("--shared-keys: %d of 2 keys under the prefix left (%v); want them kept", n, err)
	}
}

// TestExternalDebugDisabled: node-pause on an external server whose DEBUG
// command is disabled (Redis 7's default) is refused before the run with
// exit 3 naming the server and the setting; bench refuses the same way.
func TestExternalDebugDisabled(t *testing.T) {
	addr, _ := startRedis(t, "--enable-debug-command", "no")
	for _, args := range [][]string{
		{"run", "--strategy", "set-nx-px", "--scenario", "node-pause", "--ttl", "50ms", "--duration", "300ms", "--clients", "4"},
		{"bench", "--profile", "full", "--strategies", "set-nx-px", "--scenarios", "baseline,node-pause"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args = append(args, "--backend", "external", "--redis-addrs", addr, "--allow-destructive", "--out", out)
		code, text := run(t, nil, args...)
		if code != 3 || !strings.Contains(text, "external server "+addr+" refuses DEBUG SLEEP") || !strings.Contains(text, "enable-debug-command yes") {
			t.Errorf("%s: exit %d, output %q; want exit 3 naming the server and enable-debug-command", args[0], code, text)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a refused run made its --out", args[0])
		}
	}
}

// TestExternalUnreachable: an external node that does not answer is an
// environment error (exit 3) whose message names the package once, and
// it leaves no histories/ folder behind.
func TestExternalUnreachable(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "token-lua", "--backend", "external", "--redis-addrs", "127.0.0.1:1", "--out", out)
	if code != 3 || !strings.Contains(text, "127.0.0.1:1") || strings.Contains(text, "cluster: environment error: cluster:") || !strings.Contains(text, "environment error: cluster: external") {
		t.Errorf("exit %d, output %q; want exit 3 naming the address, \"cluster:\" once", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, "histories")); err == nil {
		t.Errorf("an external run that could not start left %s", filepath.Join(out, "histories"))
	}
}

// TestExternalSameServerManyNames: one server given under addresses no
// lookup relates (0.0.0.0, 127.0.0.x) is refused before the run (exit 2)
// by its run_id, naming both addresses: five names for one server are no
// quorum (redlock would run, grant nothing and blame the lock). Spaces
// around an address are trimmed and ports compare as numbers; two
// distinct servers written with spaces run.
func TestExternalSameServerManyNames(t *testing.T) {
	addr, _ := startRedis(t, "--bind", "0.0.0.0")
	other, _ := startRedis(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	var names []string
	for _, h := range []string{"127.0.0.1", "0.0.0.0", "127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		names = append(names, h+":"+port)
	}
	tests := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"five names", []string{"--strategy", "redlock", "--redis-addrs", strings.Join(names, ",")}, 2,
			[]string{"external: 127.0.0.1:" + port + " and 0.0.0.0:" + port + " are the same server (run_id ", "): give 5 distinct servers"}},
		{"leading zero", []string{"--strategy", "token-lua", "--redis-addrs", addr + ", 127.0.0.1:0" + port}, 2,
			[]string{"--redis-addrs: 127.0.0.1:0" + port + " and " + addr + " are the same server (" + addr + "); give 2 distinct servers"}},
		{"spaces", []string{"--strategy", "token-lua", "--redis-addrs", addr + ", " + other + " "}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--backend", "external", "--ttl", "50ms", "--duration", "300ms", "--clients", "2", "--out", out}, tt.args...)
			code, text := run(t, nil, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; output %q", code, tt.code, text)
			}
			for _, w := range tt.wants {
				if !strings.Contains(text, w) {
					t.Errorf("output %q; want %q", text, w)
				}
			}
			if _, err := os.Stat(out); tt.code != 0 && err == nil {
				t.Errorf("a refused run made its --out %s", out)
			}
		})
	}
}
