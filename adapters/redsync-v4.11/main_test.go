package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
)

// startRedis starts a redis-server on a free loopback port, killed when
// the test ends, and returns its address and a func that kills it sooner.
func startRedis(t *testing.T) (string, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v (install it: apt-get install redis-server)", err)
	}
	kill := func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(kill)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, kill
		}
	}
	t.Fatalf("redis-server on %s did not answer", addr)
	return "", nil
}

// TestHello: the adapter's first line declares redsync v4.11.0's claims.
func TestHello(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "adapter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output() // stdin is empty: it says hello and exits
	if err != nil {
		t.Fatal(err)
	}
	var h msg
	if err := json.Unmarshal([]byte(strings.SplitN(string(out), "\n", 2)[0]), &h); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"atomic_acquire": true, "token_release": true, "renewal": false, "reentrant": false, "quorum": true, "fencing": false, "validity": true}
	if h.Type != "hello" || h.Protocol != 1 || h.Version != "v4.11.0" || h.Nodes != 5 || fmt.Sprint(h.Claims) != fmt.Sprint(want) {
		t.Errorf("hello %+v; want protocol 1, version v4.11.0, 5 nodes, claims %v", h, want)
	}
}

// TestCalls: one owner acquires (ok, with a validity under the TTL), a
// second one is refused (fail), the release succeeds once, and with three
// of five nodes gone nothing is granted.
func TestCalls(t *testing.T) {
	var endpoints []string
	var kills []func()
	for range nodes {
		addr, kill := startRedis(t)
		endpoints, kills = append(endpoints, addr), append(kills, kill)
	}
	a, b := &adapter{mutexes: map[string]*redsync.Mutex{}}, &adapter{mutexes: map[string]*redsync.Mutex{}}
	for _, x := range []*adapter{a, b} {
		if r := x.init(msg{Endpoints: endpoints, TTLMs: 1000}); r.Type != "init_ok" {
			t.Fatalf("init: %+v", r)
		}
	}
	call := func(x *adapter, typ, key, token string) msg {
		return x.handle(msg{Type: typ, Key: key, Token: token, DeadlineMs: 500})
	}
	r := call(a, "acquire", "k", "")
	if r.Type != "ok" || r.Token == "" || r.ValidityMs == nil || *r.ValidityMs <= 0 || *r.ValidityMs > 1000 {
		t.Fatalf("acquire: %+v, want ok with a token and a validity in (0, 1000] ms", r)
	}
	if r2 := call(b, "acquire", "k", ""); r2.Type != "fail" {
		t.Errorf("second owner's acquire: %+v, want fail", r2)
	}
	if r3 := call(a, "release", "k", r.Token); r3.Type != "ok" {
		t.Errorf("release: %+v, want ok", r3)
	}
	if r4 := call(a, "release", "k", r.Token); r4.Type != "fail" {
		t.Errorf("release again: %+v, want fail", r4)
	}
	for _, kill := range kills[:3] {
		kill()
	}
	if r5 := call(a, "acquire", "k2", ""); r5.Type == "ok" {
		t.Errorf("acquire with 3 of 5 nodes down: %+v, want fail or unknown", r5)
	}
}
