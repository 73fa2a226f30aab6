// Package commandstats counts the lock commands Redis servers executed,
// from INFO snapshots (commandstats, replication role, run_id, CPU time):
// a run's server-side commands per grant. It knows which commands the
// harness, replication and connection set-up send (HarnessCommand), so
// that neither this count nor the client-side one (workload's dialer
// hook) includes them.
package commandstats

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
)

// harnessCommands are the commands lockbench itself (INFO snapshots, health
// checks, nemeses, FLUSHALL between perf rounds), Redis replication,
// Sentinel, redis-benchmark and go-redis's connection set-up send: left out
// of the commands a run's lock clients cost. Names are INFO commandstats
// names before any "|subcommand", lower case.
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

// HarnessCommand reports whether the Redis command name (any case, an
// optional "|subcommand" ignored) is one the harness, replication or
// connection set-up sends rather than a lock client: such commands are
// counted neither by the client-side hook nor in INFO commandstats.
func HarnessCommand(name string) bool {
	name, _, _ = strings.Cut(name, "|")
	return harnessCommands[strings.ToLower(name)]
}

// NodeCalls is one server's INFO snapshot: its run_id (a restarted server
// has a new one and counts from 0), its replication role, the calls of
// every command that is not a harness command (calls + rejected_calls) and
// its CPU time so far.
type NodeCalls struct {
	// RunID is INFO server's run_id ("" when the section was not asked for).
	RunID string
	// Role is INFO replication's role ("master" or "slave").
	Role string
	// Calls sums calls and rejected_calls of every lock command in INFO
	// commandstats (HarnessCommand ones left out).
	Calls int64
	// CPUSeconds is INFO cpu's used_cpu_sys + used_cpu_user, in seconds.
	CPUSeconds float64
	// At is when the snapshot was read (zero from Parse).
	At time.Time
}

// Parse reads run_id, role, used_cpu_sys/user and the calls of
// the non-harness commands from an INFO reply: lines such as
// "cmdstat_set:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=1".
// A count that does not parse gives an error quoting the line.
func Parse(info string) (NodeCalls, error) {
	var n NodeCalls
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case key == "run_id":
			n.RunID = val
		case key == "role":
			n.Role = val
		case key == "used_cpu_sys" || key == "used_cpu_user":
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return n, fmt.Errorf("commandstats: INFO cpu: bad line %q", line)
			}
			n.CPUSeconds += v
		case strings.HasPrefix(key, "cmdstat_"):
			if HarnessCommand(strings.TrimPrefix(key, "cmdstat_")) {
				continue
			}
			for _, field := range strings.Split(val, ",") {
				k, v, _ := strings.Cut(field, "=")
				if k == "calls" || k == "rejected_calls" {
					x, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						return n, fmt.Errorf("commandstats: INFO commandstats: bad line %q", line)
					}
					n.Calls += x
				}
			}
		}
	}
	return n, nil
}

// Read takes one INFO server/replication/commandstats/cpu
// snapshot through c (bounded by ctx).
func Read(ctx context.Context, c *redis.Client) (NodeCalls, error) {
	at := time.Now()
	s, err := c.Info(ctx, "server", "replication", "commandstats", "cpu").Result()
	if err != nil {
		return NodeCalls{}, fmt.Errorf("INFO commandstats on %s: %w", c.Options().Addr, err)
	}
	n, err := Parse(s)
	n.At = at
	return n, err
}

// CommandCalls takes a Read snapshot of each address with a
// client that sends only INFO (RESP2, no HELLO, no CLIENT SETINFO). An
// address that does not answer within timeout gives an error naming it.
// sec is the servers' AUTH and TLS.
func CommandCalls(ctx context.Context, addrs []string, timeout time.Duration, sec security.Security) ([]NodeCalls, error) {
	out := make([]NodeCalls, len(addrs))
	for i, a := range addrs {
		c := InfoClient(a, timeout, sec)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		n, err := Read(cctx, c)
		cancel()
		c.Close()
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// InfoClient is a go-redis client for INFO snapshots of addr: RESP2, no
// HELLO, no CLIENT SETINFO, no retries, one connection, timeout on dials,
// reads and writes, with AUTH and TLS from sec; it adds no lock command to
// the counts.
func InfoClient(addr string, timeout time.Duration, sec security.Security) *redis.Client {
	return redis.NewClient(sec.Apply(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1, PoolSize: 1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, ContextTimeoutEnabled: true}))
}

// CommandsBetween is the number of lock commands the servers executed
// between two snapshots of the same addresses: the sum over nodes that were
// primaries ("master") in both of the growth of their calls (a replica
// executes its primary's commands again, so it is left out). ok is false
// when a node restarted in between (a new run_id: its counts began again),
// changed role (a promoted replica took commands that are not in its
// primary's count) or a count went down: the figure is then unknown.
func CommandsBetween(before, after []NodeCalls) (n int64, ok bool) {
	if len(before) != len(after) {
		return 0, false
	}
	for i := range before {
		b, a := before[i], after[i]
		if b.RunID == "" || b.RunID != a.RunID || b.Role != a.Role || a.Calls < b.Calls {
			return 0, false
		}
		if b.Role == "master" && a.Role == "master" {
			n += a.Calls - b.Calls
		}
	}
	return n, true
}
