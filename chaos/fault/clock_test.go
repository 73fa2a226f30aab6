package fault

import (
	"github.com/lockbench/lockbench/internal/clustertest"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/redis/go-redis/v9"
)

// TestClockJumpMovesTIME drives clocks.jump against a real redis-server
// with the clock shim: the server's TIME reply moves by the jump, jumps add
// up, and a key whose expiry the clock passes is gone at once.
func TestClockJumpMovesTIME(t *testing.T) {
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Single}, cluster.Options{ClockShim: clustertest.Shim(t)})
	n := c.Nodes()[0]
	ctx := clustertest.Context(t)
	rc := redis.NewClient(&redis.Options{Addr: n.Addr()})
	defer rc.Close()
	if err := rc.Set(ctx, "k", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	clk := NewClocks()
	for i, step := range []time.Duration{20 * time.Second, 3 * time.Second} {
		j, err := clk.jump(ctx, n, step)
		if err != nil {
			t.Fatal(err)
		}
		if m := j.Moved(); m < step || m > step+time.Second {
			t.Errorf("jump %d: TIME moved %v, want %v (+ < 1s)", i, m, step)
		}
		if !strings.Contains(j.String(), "moved +") || !strings.Contains(j.String(), n.Name()) {
			t.Errorf("jump %d: note %q lacks evidence", i, j)
		}
		if i == 0 {
			if got := rc.Exists(ctx, "k").Val(); got != 0 {
				t.Errorf("key with PX 10000 still there after a +20s jump")
			}
		}
	}
	if got, want := clk.off[n], 23*time.Second; got != want {
		t.Errorf("cumulative offset %v, want %v", got, want)
	}
	now, err := serverTime(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(now); d < 22*time.Second || d > 24*time.Second {
		t.Errorf("server clock ahead by %v, want about 23s", d)
	}
}
