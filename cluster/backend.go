package cluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/cluster/dockerd"
)

// ErrUnsupported is wrapped by every Node operation the cluster's backend
// cannot do (e.g. Kill on the external backend, SetClockOffset on docker).
// The error names the backend and the features it supports. Test with
// errors.Is; ask in advance with Cluster.Supports or BackendFeatures.
var ErrUnsupported = errors.New("cluster: not supported by this backend")

// Backend names, for Options.Backend and lockbench's --backend.
const (
	// BackendProcess runs redis-server processes on loopback (the default).
	BackendProcess = "process"
	// BackendDocker runs every server as a container on a private Docker
	// network, through testcontainers-go.
	BackendDocker = "docker"
	// BackendExternal uses an existing deployment (Options.External).
	BackendExternal = "external"
	// BackendAuto is lockbench's default: process when redis-server is on
	// PATH, else docker when a Docker daemon answers (see ResolveBackend).
	BackendAuto = "auto"
)

// backendNames lists the backend names Options.Backend accepts (auto is
// resolved by ResolveBackend before Start).
var backendNames = []string{BackendProcess, BackendDocker, BackendExternal}

// Feature is one kind of fault a backend can inject. Faults declare the
// features they need (fault.Fault.Needs in chaos/fault) so that an unsupported pair is
// refused (lockbench run) or marked n/a (lockbench bench) before it starts.
type Feature string

// Features.
const (
	// FeatureKill is Node.Kill and Node.Restart (process: SIGKILL; docker:
	// docker kill, then start of the same container).
	FeatureKill Feature = "kill"
	// FeaturePause is Node.Pause/Resume (process: SIGSTOP/SIGCONT; docker:
	// cgroup freezer) or, on the external backend, Node.PauseFor through
	// DEBUG SLEEP.
	FeaturePause Feature = "pause"
	// FeatureClock is Node.SetClockOffset (the LD_PRELOAD clock shim).
	FeatureClock Feature = "clock"
	// FeatureProxies is a proxy.Proxy from this host to every node (partitions and
	// latency between lockbench's clients and a node).
	FeatureProxies Feature = "proxies"
	// FeatureReplicationProxy means the nodes can dial a proxy.Proxy on this host
	// (127.0.0.1), so a replica can replicate through one (the failover
	// scenarios cut replication that way).
	FeatureReplicationProxy Feature = "replication-proxy"
	// FeatureIsolate is Node.Isolate: the node is cut off its network
	// (docker network disconnect), for every client at once.
	FeatureIsolate Feature = "isolate"
	// FeatureRedisFaults is faults through Redis commands: Promote
	// (REPLICAOF NO ONE), HoldReplication (CLIENT PAUSE), PauseFor (DEBUG
	// SLEEP on external). On the external backend only with
	// Options.External.AllowDestructive.
	FeatureRedisFaults Feature = "redis-commands"
)

// backend controls the servers of one cluster: the process implementation
// (processBackend) runs redis-server processes, dockerBackend containers,
// externalBackend nothing (an existing deployment). Node methods take
// Node.op where needed and call these; a backend never calls Node methods
// that take Node.op.
type backend interface {
	// name is the backend's name (BackendProcess, ...).
	name() string
	// features lists what the backend supports, in Feature order.
	features() []Feature
	// prepare runs once before any node starts (a Docker network, ...).
	prepare(ctx context.Context, c *Cluster) error
	// start starts n (first start and restart) and waits until it answers.
	start(ctx context.Context, n *Node) error
	// kill stops n at once and waits until it is gone; no-op if not running.
	kill(n *Node) error
	// pause freezes n; resume thaws it.
	pause(n *Node) error
	resume(n *Node) error
	// state returns "T" for a paused node, else a one-letter process state.
	state(n *Node) (string, error)
	// pid returns n's process id on this host, 0 when not running.
	pid(n *Node) int
	// running reports whether n is up (possibly paused).
	running(n *Node) bool
	// setClockOffset sets n's wall-clock offset.
	setClockOffset(n *Node, d time.Duration) error
	// isolate cuts n off its network (on) or reconnects it (off).
	isolate(ctx context.Context, n *Node, on bool) error
	// close releases what prepare made (after every node was killed).
	close() error
}

// unsupported returns an error wrapping ErrUnsupported that names the
// backend, the operation and what the backend supports.
func unsupported(b backend, op string) error {
	fs := make([]string, len(b.features()))
	for i, f := range b.features() {
		fs[i] = string(f)
	}
	return fmt.Errorf("%w: %s backend cannot %s (it supports: %s)", ErrUnsupported, b.name(), op, strings.Join(fs, ", "))
}

// BackendFeatures returns the features backend name supports with options
// o (the external backend supports Redis-command faults only with
// o.External.AllowDestructive; docker supports the clock only with a clock
// shim). An unknown name returns an error listing the valid ones.
func BackendFeatures(name string, o Options) ([]Feature, error) {
	switch name {
	case "", BackendProcess:
		return processFeatures, nil
	case BackendDocker:
		return dockerFeatures(o), nil
	case BackendExternal:
		return externalFeatures(o), nil
	}
	return nil, fmt.Errorf("cluster: unknown backend %q (valid: %s, or %s)", name, strings.Join(backendNames, ", "), BackendAuto)
}

// Missing returns the features of need that have does not contain.
func Missing(have, need []Feature) []Feature {
	var out []Feature
	for _, f := range need {
		if !slices.Contains(have, f) {
			out = append(out, f)
		}
	}
	return out
}

// Backend returns the name of the cluster's backend ("process", "docker",
// "external").
func (c *Cluster) Backend() string { return c.be.name() }

// Features returns the features the cluster's backend supports.
func (c *Cluster) Features() []Feature { return slices.Clone(c.be.features()) }

// Supports reports whether the cluster's backend supports every feature.
func (c *Cluster) Supports(f ...Feature) bool { return len(Missing(c.be.features(), f)) == 0 }

// newBackend returns the backend Options.Backend names.
func newBackend(o Options) (backend, error) {
	switch o.Backend {
	case "", BackendProcess:
		return processBackend{}, nil
	case BackendDocker:
		return newDockerBackend(o), nil
	case BackendExternal:
		return newExternalBackend(o), nil
	case BackendAuto:
		return nil, fmt.Errorf("cluster: backend %q must be resolved with ResolveBackend before Start", BackendAuto)
	}
	return nil, fmt.Errorf("cluster: unknown backend %q (valid: %s)", o.Backend, strings.Join(backendNames, ", "))
}

// ResolveBackend returns the backend to use for name and, for BackendAuto,
// one line saying what auto picked and why (for a "note:" line; "" for a
// named backend). Auto becomes BackendProcess when redis-server is on PATH
// (or o.RedisServer is usable), else BackendDocker when a Docker daemon
// answers and the image o.Image (default dockerd.DefaultImage) is on the machine;
// otherwise the error wraps ErrEnvironment, says that auto tried the
// process backend first, and names both fixes. An unknown name returns an
// error listing the valid ones.
func ResolveBackend(ctx context.Context, name string, o Options) (string, string, error) {
	switch name {
	case BackendProcess, BackendDocker, BackendExternal:
		return name, "", nil
	case BackendAuto, "":
	default:
		return "", "", fmt.Errorf("cluster: unknown backend %q (valid: %s, %s)", name, BackendAuto, strings.Join(backendNames, ", "))
	}
	bin := o.RedisServer
	if bin == "" {
		bin = "redis-server"
	}
	if p, err := exec.LookPath(bin); err == nil {
		return BackendProcess, fmt.Sprintf("--backend auto runs the process backend: %s is on PATH", p), nil
	}
	img := o.Image
	if img == "" {
		img = dockerd.DefaultImage
	}
	processFix := "apt-get install redis-server (then auto runs the process backend)"
	cli, err := dockerd.Client(ctx)
	if err != nil {
		return "", "", fmt.Errorf("%w: cluster: --backend auto tried the process backend first, but redis-server is not on PATH, and no Docker daemon answers for the docker backend; fix one: %s, or start Docker and build the local image with `make docker-image` (then pass --redis-image %s)", ErrEnvironment, processFix, dockerd.LocalImage)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, img); err != nil {
		return "", "", fmt.Errorf("%w: cluster: --backend auto tried the process backend first, but redis-server is not on PATH, and the docker backend's image %s is not on this machine (lockbench never pulls); fix one: %s, or build the local image with `make docker-image` and pass --redis-image %s", ErrEnvironment, img, processFix, dockerd.LocalImage)
	}
	return BackendDocker, fmt.Sprintf("--backend auto runs the docker backend (image %s): redis-server is not on PATH (install it for the process backend: apt-get install redis-server)", img), nil
}

// BackendName is the backend o runs on ("process" for "").
func BackendName(o Options) string {
	if o.Backend == "" {
		return BackendProcess
	}
	return o.Backend
}
