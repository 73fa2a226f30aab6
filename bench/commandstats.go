package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// harnessCommands are the commands lockbench itself (INFO snapshots, health
// checks, nemeses), Redis replication, Sentinel and go-redis's connection
// set-up send: left out of the commands a run's lock clients cost. Names are
// INFO commandstats names before any "|subcommand".
var harnessCommands = map[string]bool{
	"info": true, "ping": true, "hello": true, "client": true, "config": true, "command": true,
	"auth": true, "select": true, "quit": true, "reset": true,
	"replconf": true, "psync": true, "sync": true, "replicaof": true, "slaveof": true, "role": true,
	"debug": true, "shutdown": true, "time": true, "sentinel": true, "monitor": true,
	"publish": true, "subscribe": true, "psubscribe": true, "unsubscribe": true, "punsubscribe": true,
	"multi": true, "exec": true, "discard": true, // Sentinel's failover reconfiguration; no strategy uses transactions
	"save": true, "bgsave": true, "bgrewriteaof": true, "flushall": true, "flushdb": true,
	"slowlog": true, "latency": true, "memory": true, "dbsize": true, "acl": true,
}

// nodeCalls is one node's INFO snapshot: its run_id (a restarted server
// has a new one and counts from 0), its replication role and the calls of
// every command that is not a harness command (calls + rejected_calls).
type nodeCalls struct {
	runID, role string
	calls       int64
}

// commandCalls takes an INFO server/replication/commandstats snapshot of
// each address with a client that sends only INFO (RESP2, no HELLO, no
// CLIENT SETINFO). An address that does not answer within timeout gives an
// error naming it.
func commandCalls(ctx context.Context, addrs []string, timeout time.Duration) ([]nodeCalls, error) {
	out := make([]nodeCalls, len(addrs))
	for i, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, Protocol: 2, DisableIdentity: true, MaxRetries: -1, PoolSize: 1,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, ContextTimeoutEnabled: true})
		cctx, cancel := context.WithTimeout(ctx, timeout)
		s, err := c.Info(cctx, "server", "replication", "commandstats").Result()
		cancel()
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("INFO commandstats on %s: %w", a, err)
		}
		out[i] = parseCommandStats(s)
	}
	return out, nil
}

// parseCommandStats reads run_id, role and the calls of the non-harness
// commands from an INFO reply: lines such as
// "cmdstat_set:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=1".
func parseCommandStats(info string) nodeCalls {
	var n nodeCalls
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case key == "run_id":
			n.runID = val
		case key == "role":
			n.role = val
		case strings.HasPrefix(key, "cmdstat_"):
			name, _, _ := strings.Cut(strings.TrimPrefix(key, "cmdstat_"), "|")
			if harnessCommands[strings.ToLower(name)] {
				continue
			}
			for _, field := range strings.Split(val, ",") {
				k, v, _ := strings.Cut(field, "=")
				if k == "calls" || k == "rejected_calls" {
					x, _ := strconv.ParseInt(v, 10, 64)
					n.calls += x
				}
			}
		}
	}
	return n
}

// commandsBetween is the number of lock commands the servers executed
// between two snapshots of the same addresses: the sum over nodes that were
// primaries ("master") in both of the growth of their calls (a replica
// executes its primary's commands again, so it is left out). ok is false
// when a node restarted in between (a new run_id: its counts began again),
// changed role (a promoted replica took commands that are not in its
// primary's count) or a count went down: the figure is then unknown.
func commandsBetween(before, after []nodeCalls) (n int64, ok bool) {
	if len(before) != len(after) {
		return 0, false
	}
	for i := range before {
		b, a := before[i], after[i]
		if b.runID == "" || b.runID != a.runID || b.role != a.role || a.calls < b.calls {
			return 0, false
		}
		if b.role == "master" && a.role == "master" {
			n += a.calls - b.calls
		}
	}
	return n, true
}
