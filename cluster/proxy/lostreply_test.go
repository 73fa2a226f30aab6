package proxy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/proxy"
)

// TestLostReply: through an armed proxy a fresh client's SET NX (after its
// connection set-up, which passes) reaches the real server and takes
// effect, while the client sees its connection end; the lost reply fires
// once, an EVALSHA of an unknown script passes with its -NOSCRIPT and the
// EVAL after it loses its reply, and after Disarm every reply flows.
func TestLostReply(t *testing.T) {
	c := startT(t)
	ctx := ctxT(t)
	direct := client(t, c.Nodes()[0].Addr())
	p, err := proxy.New(ctx, "c0-n1", c.Nodes()[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	var atDrop string
	lr, err := p.ArmLostReply(func(*proxy.LostReply) { atDrop, _ = direct.Get(ctx, "lock").Result() })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ArmLostReply(nil); err == nil {
		t.Error("a second ArmLostReply on an armed proxy succeeded")
	}
	rc := client(t, p.Addr()) // dials now: HELLO and CLIENT SETINFO go first
	ok, err := rc.SetNX(ctx, "lock", "token-1", time.Minute).Result()
	if err == nil {
		t.Fatalf("SET NX through an armed proxy returned %v without error, want its reply lost", ok)
	}
	select {
	case <-lr.Fired():
	default:
		t.Fatal("the client saw an error but the lost reply did not fire")
	}
	if got := lr.Command(); got != "SET" {
		t.Errorf("Command() = %q, want SET", got)
	}
	if got := lr.Reply(); got != "+OK" {
		t.Errorf("Reply() = %q, want +OK", got)
	}
	if atDrop != "token-1" {
		t.Errorf("at the drop the server held %q, want token-1: the SET NX must have taken effect", atDrop)
	}
	// Fired once: the next call goes through.
	if v, err := rc.Get(ctx, "lock").Result(); err != nil || v != "token-1" {
		t.Errorf("GET after the lost reply: %q, %v", v, err)
	}
	if err := lr.Disarm(); err != nil {
		t.Fatal(err)
	}
	if err := lr.Disarm(); err != nil {
		t.Errorf("second Disarm: %v", err)
	}

	// A script: EVALSHA of an unknown script answers -NOSCRIPT (passed),
	// then go-redis sends EVAL, whose reply is lost.
	lr, err = p.ArmLostReply(nil)
	if err != nil {
		t.Fatal(err)
	}
	script := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	if _, err := script.Run(ctx, rc, []string{"n"}).Result(); err == nil {
		t.Fatal("script through an armed proxy succeeded, want its reply lost")
	} else if errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	if got := lr.Command(); got != "EVAL" {
		t.Errorf("Command() = %q, want EVAL (the EVALSHA's -NOSCRIPT passes)", got)
	}
	if n, err := direct.Get(ctx, "n").Int(); err != nil || n != 1 {
		t.Errorf("n = %d (%v), want 1: the script ran once", n, err)
	}
	if err := p.DisarmLostReply(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Errorf("SET after Disarm: %v", err)
	}
}
