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

// Names returns the names of All, in order.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name()
	}
	return names
}

// Lookup returns the strategy named name, or an error that lists the valid
// names.
func Lookup(name string) (Strategy, error) {
	for _, s := range All() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown strategy %q (valid: %s)", name, strings.Join(Names(), ", "))
}
