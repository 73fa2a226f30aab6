package strategies

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
)

// All returns every strategy, home-made ones first, then the library
// adapters, then the locks on consensus systems (Consensus), in the order
// reports list them. Each call builds a new slice.
func All() []impl.Strategy {
	return append([]impl.Strategy{
		naive{},
		setNXPXStrategy{},
		tokenLua{},
		tokenLuaWait{},
		tokenLuaCluster{},
		tokenLuaWaitCluster{},
		watchdog{},
		watchdogCluster{},
		reentrant{},
		redlock{},
		fenced{},
		fencedCluster{},
		redsyncAdapter{},
		redsyncAdapter{single: true},
		redislockAdapter{},
		redislockAdapter{cluster: true},
	}, Consensus()...)
}

// Consensus returns the strategies whose locks live on etcd or ZooKeeper
// (Info.Server), in report order: the last ones of All. Each call builds
// a new slice.
func Consensus() []impl.Strategy {
	return []impl.Strategy{etcdMutex{}, etcdFenced{}, zkLock{}, zkFenced{}}
}

// Names returns the names of All, in order.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name()
	}
	return names
}

// Lookup returns the strategy named name (of All), or an
// error that lists the valid names. A name with ExecPrefix ("exec:COMMAND"
// or "exec:NAME") runs an adapter process: the first Lookup of it starts
// the adapter once to read its hello, later ones reuse that (see Exec for
// its errors).
func Lookup(name string) (impl.Strategy, error) {
	if adapterclient.IsExec(name) {
		return adapterclient.Lookup(name)
	}
	for _, s := range All() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown strategy %q (valid: %s, or %sCOMMAND for any lock through an adapter process)", name, strings.Join(Names(), ", "), adapterclient.ExecPrefix)
}
