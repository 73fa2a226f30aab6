package impl

import (
	"fmt"
	"strings"
)

// All returns every strategy, home-made ones first, in the order reports
// list them. Each call builds a new slice.
func All() []Strategy {
	return []Strategy{
		naive{},
		setNXPXStrategy{},
		tokenLua{},
		watchdog{},
		reentrant{},
		redlock{},
		fenced{},
		redsyncAdapter{},
		redsyncAdapter{single: true},
		redislockAdapter{},
	}
}

// Consensus returns the strategies whose locks live on etcd or ZooKeeper
// (Info.Server), in report order. They are not in All, whose strategies
// every bench profile, verdict table and plot covers, until those have
// their rows; Lookup finds them. Each call builds a new slice.
func Consensus() []Strategy {
	return []Strategy{etcdMutex{}, etcdFenced{}, zkLock{}, zkFenced{}}
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

// Lookup returns the strategy named name (of All or Consensus), or an
// error that lists the valid names. A name with ExecPrefix ("exec:COMMAND"
// or "exec:NAME") runs an adapter process: the first Lookup of it starts
// the adapter once to read its hello, later ones reuse that (see Exec for
// its errors).
func Lookup(name string) (Strategy, error) {
	if IsExec(name) {
		return lookupExec(name)
	}
	for _, s := range append(All(), Consensus()...) {
		if s.Name() == name {
			return s, nil
		}
	}
	names := Names()
	for _, s := range Consensus() {
		names = append(names, s.Name())
	}
	return nil, fmt.Errorf("unknown strategy %q (valid: %s, or %sCOMMAND for any lock through an adapter process)", name, strings.Join(names, ", "), ExecPrefix)
}
