package strategies_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// oldRelease is the compare-and-delete script before it told a missing key
// (expired) from another owner's (taken): the baseline of BenchmarkRelease.
var oldRelease = redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`)

// BenchmarkRelease: token-lua's acquire + release, whose release script
// now returns -1 for a missing key and 0 for another owner's, against the
// same pair with the script before that change (both run SET NX PX and
// one EVALSHA per iteration: the reason costs nothing but a branch in Lua).
// Besides ns/op (round trips, noisy on a shared machine) it reports
// server-µs/release, the server's own time per EVALSHA (INFO
// commandstats), which machine load barely moves. Compare the two as a
// ratio within one run:
//
//	go test ./impl -run '^$' -bench Release -count 6
func BenchmarkRelease(b *testing.B) {
	c, _ := startNodes(b, 1)
	node := redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})
	defer node.Close()
	nodes := []redis.UniversalClient{node}
	ctx := context.Background()
	st, _ := strategies.Lookup("token-lua")
	l, err := st.New(impl.Config{Nodes: nodes, TTL: time.Second, Owner: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.Run("reason", func(b *testing.B) {
		defer serverCost(b, node)()
		for b.Loop() {
			lease, err := l.Acquire(ctx, "bench:k")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("before", func(b *testing.B) {
		defer serverCost(b, node)()
		for b.Loop() {
			lease, err := l.Acquire(ctx, "bench:k")
			if err != nil {
				b.Fatal(err)
			}
			if err := oldRelease.Run(ctx, nodes[0], []string{lease.Key}, lease.Token).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// serverCost resets the server's command statistics and returns the func
// that reports its time per EVALSHA as server-µs/release.
func serverCost(b *testing.B, node *redis.Client) func() {
	ctx := context.Background()
	if err := node.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	return func() {
		info, err := node.Info(ctx, "commandstats").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
				for _, f := range strings.Split(rest, ",") {
					if v, ok := strings.CutPrefix(f, "usec_per_call="); ok {
						us, _ := strconv.ParseFloat(v, 64)
						b.ReportMetric(us, "server-µs/release")
					}
				}
			}
		}
	}
}
