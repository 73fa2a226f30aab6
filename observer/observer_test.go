package observer

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/commandstats"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// TestObserverReadsServerState sets a string lock, a reentrant hash lock
// and no lock on a real redis-server, and checks what the Observer records:
// the token, count and PTTL of each key, absent keys as -2, the reads of a
// pass sharing one Invoke, a node that does not answer as info; and that
// the commands it reports sending are exactly what the server's INFO
// commandstats counted (so a run can leave them out of its figures).
func TestObserverReadsServerState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := startSingle(ctx, t, "token-lua")
	addr := c.Nodes()[0].Addr()
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	if err := rc.Set(ctx, "lb:k0", "c1:tok:7", 5*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.HSet(ctx, "lb:k1", "c2:owner", 3).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.PExpire(ctx, "lb:k1", 5*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	// A node nobody listens on: its reads are unknown, and send nothing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	before, err := commandstats.CommandCalls(ctx, []string{addr}, time.Second, security.Security{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &collect{}
	o, err := Start(ctx, Config{
		Nodes: []Node{{Name: "n1", Addr: addr}, {Name: "n2", Addr: dead}},
		Keys:  []string{"lb:k0", "lb:k1", "lb:k2"}, TTL: 200 * time.Millisecond,
		Clock: history.NewClock(), History: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	o.Notify("lb:k0")
	o.Notify("not-a-key") // ignored
	time.Sleep(120 * time.Millisecond)
	o.Stop(ctx)
	o.Stop(ctx) // a second Stop does nothing
	after, err := commandstats.CommandCalls(ctx, []string{addr}, time.Second, security.Security{})
	if err != nil {
		t.Fatal(err)
	}

	type seen struct {
		ok, info int
		op       history.Operation
	}
	got := map[string]*seen{}
	invokes := map[int64]map[string]int{} // invoke → node → reads
	for _, op := range rec.ops {
		if op.Kind != history.Observe || op.Client != -1 || op.Stream != -1 {
			t.Fatalf("not an observation: %+v", op)
		}
		s := got[op.Node+" "+op.Key]
		if s == nil {
			s = &seen{}
			got[op.Node+" "+op.Key] = s
		}
		if invokes[op.Invoke] == nil {
			invokes[op.Invoke] = map[string]int{}
		}
		invokes[op.Invoke][op.Node]++
		switch op.Result {
		case history.OK:
			s.ok++
			s.op = op
		case history.Info:
			s.info++
			if op.Error == "" || op.Token != "" {
				t.Errorf("unknown read without error or with a token: %+v", op)
			}
		}
	}
	for _, k := range []string{"lb:k0", "lb:k1", "lb:k2"} {
		// n1 answers: at least one read is ok (on a busy machine a read
		// may still time out, an unknown read, checked above).
		if s := got["n1 "+k]; s == nil || s.ok == 0 {
			t.Fatalf("n1 %s: %+v", k, s)
		}
		if s := got["n2 "+k]; s == nil || s.ok != 0 || s.info == 0 {
			t.Fatalf("n2 %s (dead): %+v", k, s)
		}
	}
	if op := got["n1 lb:k0"].op; op.Token != "c1:tok:7" || op.Count != 0 || op.Value <= 4000 || op.Value > 5000 {
		t.Errorf("string lock: %+v", op)
	}
	if op := got["n1 lb:k1"].op; op.Token != "c2:owner" || op.Count != 3 || op.Value <= 4000 || op.Value > 5000 {
		t.Errorf("hash lock: %+v", op)
	}
	if op := got["n1 lb:k2"].op; op.Token != "" || op.Value != -2 {
		t.Errorf("absent key: %+v", op)
	}
	for inv, nodes := range invokes {
		if nodes["n1"] != nodes["n2"] {
			t.Errorf("pass at %d read %v: every node reads the same keys in a pass", inv, nodes)
		}
	}
	own := o.Commands()
	if own[dead] != 0 {
		t.Errorf("commands sent to a dead node: %d", own[dead])
	}
	reads := 0
	for _, k := range []string{"lb:k0", "lb:k1", "lb:k2"} {
		reads += got["n1 "+k].ok
	}
	if own[addr] != int64(observedCommands*reads) {
		t.Errorf("commands to n1: %d, want %d for %d reads", own[addr], observedCommands*reads, reads)
	}
	after[0].Calls -= own[addr]
	if n, ok := commandstats.CommandsBetween(before, after); !ok || n != 0 {
		t.Errorf("server counted %d commands (known %v) beyond the observer's own: want 0", n, ok)
	}
}

// BenchmarkObserverCost measures what the Observer costs a run: each
// iteration runs the same workload twice against one real redis-server,
// once without and once with the Observer (alternating which goes first),
// and reports grants/s of each, their ratio (on/off: 1 is free), the
// observer's reads per second and its share of the server's commands.
// "contended" is the observer's worst case (16 clients on one key: nearly
// every acquire fails and asks for a read); "own-keys" has no failure, only
// the periodic reads of 16 keys.
//
//	go test -run - -bench ObserverCost -benchtime 5x ./observer/
func BenchmarkObserverCost(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  workload.Config
	}{
		{"contended", workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond}},
		{"own-keys", workload.Config{Clients: 16, OwnKeys: true, TTL: 100 * time.Millisecond}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			c, st := startSingle(ctx, b, "set-nx-px")
			addr := c.Nodes()[0].Addr()
			var grants [2]float64
			var secs [2]float64
			var reads, ownCmds, serverCmds float64
			for i := 0; i < b.N; i++ {
				for _, on := range []bool{i%2 == 0, i%2 != 0} {
					cfg := bc.cfg
					cfg.Duration, cfg.Seed = 500*time.Millisecond, int64(i)
					rec := &collect{}
					env := workload.Env{Strategy: st, Clock: history.NewClock(), IDs: &history.IDs{}, History: rec,
						Nodes: workload.DialNodes([]string{addr}, func(int) workload.Dialer { return workload.Dialer{Timeout: 500 * time.Millisecond} })}
					var o *Observer
					wc, err := cfg.WithDefaults()
					if err != nil {
						b.Fatal(err)
					}
					before, _ := commandstats.CommandCalls(ctx, []string{addr}, time.Second, security.Security{})
					if on {
						keys := make([]string, wc.Keys)
						for k := range keys {
							keys[k] = wc.Key(k)
						}
						o, err = Start(ctx, Config{Nodes: []Node{{Name: "n1", Addr: addr}}, Keys: keys, TTL: cfg.TTL, Clock: env.Clock, History: rec})
						if err != nil {
							b.Fatal(err)
						}
						env.Observer = o
					}
					stats, err := workload.Run(ctx, cfg, env)
					if err != nil {
						b.Fatal(err)
					}
					k := 0
					if on {
						k = 1
						o.Stop(ctx)
						after, _ := commandstats.CommandCalls(ctx, []string{addr}, time.Second, security.Security{})
						all, _ := commandstats.CommandsBetween(before, after)
						own := o.Commands()[addr]
						ownCmds += float64(own)
						serverCmds += float64(all)
						for _, op := range rec.ops {
							if op.Kind == history.Observe {
								reads++
							}
						}
					}
					grants[k] += float64(stats.Grants)
					secs[k] += stats.Elapsed.Seconds()
				}
			}
			off, on := grants[0]/secs[0], grants[1]/secs[1]
			b.ReportMetric(off, "grants/s-off")
			b.ReportMetric(on, "grants/s-on")
			b.ReportMetric(on/off, "on/off")
			b.ReportMetric(reads/secs[1], "reads/s")
			b.ReportMetric(100*ownCmds/serverCmds, "%server-cmds")
		})
	}
}

// startSingle starts one real redis-server (stopped at cleanup) and looks
// up strategy.
func startSingle(ctx context.Context, t testing.TB, strategy string) (*cluster.Cluster, impl.Strategy) {
	t.Helper()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	st, err := strategies.Lookup(strategy)
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// collect is a workload.Recorder that keeps every operation in memory.
type collect struct {
	mu  sync.Mutex
	ops []history.Operation
}

func (c *collect) Record(op history.Operation) {
	c.mu.Lock()
	c.ops = append(c.ops, op)
	c.mu.Unlock()
}
