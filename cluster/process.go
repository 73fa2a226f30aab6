package cluster

import (
	"context"
	"syscall"
	"time"
)

// processBackend runs redis-server (and redis-sentinel) processes on free
// loopback ports: the default backend, and the only one with the
// clock shim and nodes that reach proxies on 127.0.0.1.
type processBackend struct{}

// processFeatures is everything but FeatureIsolate.
var processFeatures = []Feature{FeatureKill, FeaturePause, FeatureClock, FeatureProxies, FeatureReplicationProxy, FeatureRedisFaults}

func (processBackend) name() string                                  { return BackendProcess }
func (processBackend) features() []Feature                           { return processFeatures }
func (processBackend) prepare(context.Context, *Cluster) error       { return nil }
func (processBackend) start(ctx context.Context, n *Node) error      { return n.startProcess(ctx) }
func (processBackend) kill(n *Node) error                            { return n.killProcess() }
func (processBackend) state(n *Node) (string, error)                 { return n.processState() }
func (processBackend) pid(n *Node) int                               { return n.processPID() }
func (processBackend) running(n *Node) bool                          { return n.processPID() != 0 }
func (processBackend) close() error                                  { return nil }
func (processBackend) setClockOffset(n *Node, d time.Duration) error { return n.setShimOffset(d) }

func (processBackend) pause(n *Node) error {
	return n.signal(syscall.SIGSTOP, func(s string) bool { return s == "T" })
}

func (processBackend) resume(n *Node) error {
	return n.signal(syscall.SIGCONT, func(s string) bool { return s != "T" })
}

func (b processBackend) isolate(context.Context, *Node, bool) error {
	return unsupported(b, "isolate a node (cut it off its network); use a Proxy per client link instead")
}

// start starts the node on its cluster's backend.
func (n *Node) start(ctx context.Context) error { return n.c.be.start(ctx, n) }

// kill kills the node on its cluster's backend, without the op lock.
func (n *Node) kill() error { return n.c.be.kill(n) }
