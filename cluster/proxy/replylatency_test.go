package proxy_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/proxy"
)

// TestReplyLatency: with the replies of a proxy delayed (SetReplyLatency),
// a client's SET reaches the real server and takes effect while its reply
// is still held back (the delay, a minute, dwarfs any scheduling noise),
// and removing the delay lets the held-back reply go on at once.
func TestReplyLatency(t *testing.T) {
	c := startT(t)
	ctx := ctxT(t)
	direct := client(t, c.Nodes()[0].Addr())
	p, err := proxy.New(ctx, "c0-n1", c.Nodes()[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Its own client: the shared one's 1 s read timeout would end the
	// wait for the held-back reply.
	rc := redis.NewClient(&redis.Options{Addr: p.Addr(), ReadTimeout: 2 * time.Minute, MaxRetries: -1, PoolSize: 1})
	defer rc.Close()
	if err := rc.Ping(ctx).Err(); err != nil { // the connection set-up, before the delay
		t.Fatal(err)
	}
	if err := p.SetReplyLatency(time.Minute); err != nil {
		t.Fatal(err)
	}
	replied := make(chan error, 1)
	go func() { replied <- rc.Set(ctx, "lock", "token-1", 0).Err() }()
	for {
		v, err := direct.Get(ctx, "lock").Result()
		if err == nil && v == "token-1" {
			break
		}
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-replied:
		t.Fatalf("the SET's reply came (%v) while replies were delayed a minute", err)
	default:
	}
	if err := p.SetReplyLatency(0); err != nil {
		t.Fatal(err)
	}
	if err := <-replied; err != nil {
		t.Errorf("the SET's held-back reply: %v", err)
	}
}
