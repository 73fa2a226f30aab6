package main

import (
	"fmt"
	"slices"
	"strings"

	"al.essio.dev/pkg/shellescape"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/preflight"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/shard"
	"github.com/lockbench/lockbench/workload"
)

// runCommand is the lockbench command line that reproduces one run: its
// strategy, scenario, seed and base workload (nesting depth included for a
// reentrant strategy, which `lockbench run` would otherwise run at depth 1).
func runCommand(s bench.Spec) string {
	w := s.Workload
	cmd := fmt.Sprintf("lockbench run --strategy %s --scenario %s --clients %d --keys %d --ttl %v --duration %v --seed %d",
		quote(s.Strategy), s.Scenario, w.Clients, w.Keys, w.TTL, w.Duration, s.Seed)
	if w.CS.Kind == workload.CSFixed && w.CS.Max == 0 && w.CS.TailShare == 0 && w.CS.Min > 0 && w.CS.Min != w.TTL/20 {
		cmd += fmt.Sprintf(" --cs-min %v", w.CS.Min) // a profile's critical section kept at a longer TTL
	}
	if w.OwnKeys {
		cmd += " --own-keys" // an uncontended cost run: a key per client
	}
	if st, err := strategies.Lookup(s.Strategy); err == nil && st.Info().Claims.Reentrant && w.Reentrancy > 1 {
		cmd += fmt.Sprintf(" --reentrancy %d", w.Reentrancy)
	}
	return cmd + backendArgs(s.Cluster, w.KeyPrefix)
}

// benchCommand is the lockbench command line that reproduces a bench of
// profile p with base seed seed and repeat runs per cell into out. When p's
// strategies or scenarios differ from those of the named profile it was
// made from (narrowed with --strategies/--scenarios), they are listed;
// a part of a sharded bench adds --shard I/N.
func benchCommand(p bench.Profile, seed int64, repeat int, out string, sh shard.Shard) string {
	cmd := fmt.Sprintf("lockbench bench --profile %s --seed %d --repeat %d", p.Name, seed, repeat)
	named, err := bench.LookupProfile(p.Name)
	if err != nil || !slices.Equal(named.Strategies, p.Strategies) {
		cmd += " --strategies " + quote(strings.Join(p.Strategies, ","))
	}
	if err != nil || !slices.Equal(named.Scenarios, p.Scenarios) {
		cmd += " --scenarios " + quote(strings.Join(p.Scenarios, ","))
	}
	if !sh.Whole() {
		cmd += " --shard " + sh.String()
	}
	return cmd + " --out " + quote(out)
}

// quote returns s as one shell word: unchanged when it holds only
// characters no POSIX shell treats specially (so plain commands read as
// typed), else single-quoted (al.essio.dev/pkg/shellescape).
func quote(s string) string { return shellescape.Quote(s) }

// commandLine is the lockbench command line of args (without the program
// name), each argument quoted for a POSIX shell where it needs it (quote),
// so that a reproduce command can be pasted as it is.
func commandLine(args []string) string {
	return strings.TrimSpace("lockbench " + shellescape.QuoteCommand(args))
}

// backendArgs are the backend flags of runCommand and of a bench's command
// ("" on the process backend with the default key prefix).
func backendArgs(o cluster.Options, prefix string) string {
	var b strings.Builder
	switch o.Backend {
	case cluster.BackendDocker:
		fmt.Fprintf(&b, " --backend docker --redis-image %s", quote(dockerImage(o)))
	case cluster.BackendExternal:
		fmt.Fprintf(&b, " --backend external --redis-addrs %s", quote(strings.Join(o.External.Addrs, ",")))
		if len(o.External.SentinelAddrs) > 0 {
			fmt.Fprintf(&b, " --sentinel-addrs %s --master-name %s", quote(strings.Join(o.External.SentinelAddrs, ",")), quote(o.External.MasterName))
		}
		if o.External.AllowDestructive {
			b.WriteString(" " + cluster.AllowDestructiveFlag)
		}
		if o.External.SharedKeys {
			b.WriteString(" " + preflight.SharedKeysFlag)
		}
	}
	sec := o.Security
	if o.Backend != cluster.BackendExternal {
		sec.CAFile, sec.CertFile, sec.KeyFile, sec.ServerName = "", "", "", "" // made for the run
	}
	b.WriteString(securityArgs(sec))
	if prefix != "" && prefix != "lb:" {
		fmt.Fprintf(&b, " --key-prefix %s", quote(prefix))
	}
	return b.String()
}

// dockerImage is the Docker image of a docker run's options.
func dockerImage(o cluster.Options) string {
	if o.Image == "" {
		return dockerd.DefaultImage
	}
	return o.Image
}
