package proxy_test

import (
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/proxy"
)

// TestProxy: a client through the proxy reaches a real server; Cut refuses
// connects and Restore serves again on the same address; SetLatency adds
// its delay each way; Blackhole drops every byte until turned off; a
// closed proxy refuses Cut.
func TestProxy(t *testing.T) {
	c := startT(t)
	ctx := ctxT(t)
	p, err := proxy.New(ctx, "n1", c.Nodes()[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rc := client(t, p.Addr())
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Get(ctx, "k").Err(); err == nil {
		t.Error("GET through a cut proxy succeeded")
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), 200*time.Millisecond); err == nil {
		t.Error("connect to a cut proxy succeeded")
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, 2*time.Second, "GET after Restore", func() (bool, error) {
		v, err := rc.Get(ctx, "k").Result()
		return err == nil && v == "v", err
	}); err != nil {
		t.Error(err)
	}

	const added = 20 * time.Millisecond
	if err := p.SetLatency(added); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 2*added {
		t.Errorf("round trip %v with %v latency each way, want >= %v", rtt, added, 2*added)
	}
	if err := p.SetLatency(0); err != nil {
		t.Fatal(err)
	}
	if p.Latency() != 0 {
		t.Errorf("Latency() = %v after SetLatency(0)", p.Latency())
	}

	if err := p.Blackhole(true); err != nil {
		t.Fatal(err)
	}
	bc := redis.NewClient(&redis.Options{Addr: p.Addr(), ReadTimeout: 100 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer bc.Close()
	if err := bc.Ping(ctx).Err(); err == nil {
		t.Error("PING through a blackholed proxy succeeded")
	}
	if err := p.Blackhole(false); err != nil {
		t.Fatal(err)
	}
	if err := client(t, p.Addr()).Ping(ctx).Err(); err != nil {
		t.Errorf("PING after Blackhole(false): %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Cut(); err == nil {
		t.Error("Cut after Close succeeded")
	}
}
