package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/noise"
)

// rttProbeKey is the key an etcd round-trip probe reads (absent: the
// read answers with no key, which is a round trip all the same).
const rttProbeKey = "lockbench-rtt-probe"

// consensusProbes returns the round-trip probes of a run of a lock on
// etcd or ZooKeeper (noise.Probe: the unit of the run's overhead in round
// trips, as PING is for Redis), one per server in addrs, through the
// lock's own client library: a serializable etcd Get (answered by the
// member itself, no Raft round), a ZooKeeper exists("/") on a session of
// its own; each over TLS and logged in when sec says so. close releases
// the clients. A client that cannot be made gives an error.
func consensusProbes(server impl.Server, addrs []string, sec security.Security) (probes []noise.Probe, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for _, c := range closers {
			c()
		}
	}
	for _, addr := range addrs {
		switch server {
		case impl.ServerEtcd:
			cli, err := clientv3.New(*sec.ApplyEtcd(&clientv3.Config{Endpoints: []string{addr}, DialTimeout: time.Second, Logger: zap.NewNop()}))
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("round-trip probe: etcd client for %s: %w", addr, sec.RedactErr(err))
			}
			closers = append(closers, func() { cli.Close() })
			probes = append(probes, noise.Probe{Server: addr, RoundTrip: func(ctx context.Context) error {
				_, err := cli.Get(ctx, rttProbeKey, clientv3.WithSerializable())
				return err
			}})
		case impl.ServerZooKeeper:
			conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(zkQuiet{}), zk.WithDialer(sec.ZKDialer(nil)))
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("round-trip probe: ZooKeeper session for %s: %w", addr, err)
			}
			closers = append(closers, conn.Close)
			actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = sec.ZKAddAuth(actx, conn)
			cancel()
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("round-trip probe: ZooKeeper session for %s: %w", addr, err)
			}
			probes = append(probes, noise.Probe{Server: addr, RoundTrip: func(ctx context.Context) error {
				done := make(chan error, 1)
				go func() {
					_, _, err := conn.Exists("/")
					done <- err
				}()
				select {
				case err := <-done:
					return err
				case <-ctx.Done():
					return ctx.Err()
				}
			}})
		}
	}
	return probes, closeAll, nil
}

// zkQuiet discards go-zookeeper's log lines.
type zkQuiet struct{}

// Printf discards a log line.
func (zkQuiet) Printf(string, ...any) {}
