package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster"
)

// Shared holds the etcd clusters and ZooKeeper ensembles of one bench,
// one per topology, each started by the first run that needs it and kept
// for the runs after it: a three-member ensemble takes seconds to start
// (a JVM each), more than many of its runs. A run on a shared cluster
// leaves it healed (its nemesis restarts and resumes every member and
// waits for a leader) and uses keys of its own (RunKeyPrefix), so a lock
// a crashed client left behind, whose lease runs out a TTL later, is no
// other run's. Stop stops them all; Bench calls it on return, also on
// error, Ctrl-C and panic. Redis topologies are never shared: their
// scenarios restart servers empty, with other persistence or a clock
// shim. Safe for concurrent use.
type Shared struct {
	opts cluster.Options
	mu   sync.Mutex
	cs   map[string]*cluster.Cluster // by Topology.String()
	runs int
}

// NewShared returns an empty Shared for clusters started with opts.
func NewShared(opts cluster.Options) *Shared {
	return &Shared{opts: opts, cs: map[string]*cluster.Cluster{}}
}

// sharedReady bounds the check, before a run, that a shared cluster still
// has every member serving and a leader.
const sharedReady = 15 * time.Second

// get returns the running cluster of topology t and the key prefix tag of
// the run that asked (RunKeyPrefix), starting the cluster when there is
// none; a cluster whose members no longer agree on a leader within
// sharedReady is stopped and replaced. ok is false when t is not shared
// (a Redis topology, or a backend other than process): the run starts
// its own.
func (s *Shared) get(ctx context.Context, t cluster.Topology, o cluster.Options) (c *cluster.Cluster, tag string, ok bool, err error) {
	if s == nil || !t.Kind.Consensus() || (o.Backend != "" && o.Backend != cluster.BackendProcess) {
		return nil, "", false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	tag = fmt.Sprintf("r%d:", s.runs)
	key := t.String()
	if c := s.cs[key]; c != nil {
		if err := c.WaitQuorum(ctx, sharedReady); err == nil {
			return c, tag, true, nil
		} else if ctx.Err() != nil {
			return nil, "", true, err
		}
		c.Stop() // broken: replaced below
		delete(s.cs, key)
	}
	c, err = cluster.Start(ctx, t, s.opts)
	if err != nil {
		return nil, "", true, err
	}
	s.cs[key] = c
	return c, tag, true, nil
}

// Stop stops every shared cluster (every member process is killed and
// reaped) and returns their errors.
func (s *Shared) Stop() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, c := range s.cs {
		errs = append(errs, c.Stop())
		delete(s.cs, k)
	}
	return errors.Join(errs...)
}
