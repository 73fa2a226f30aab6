package strategies

import (
	"time"

	"github.com/lockbench/lockbench/impl"
)

// zkFenced is zk-lock with a fencing token: the lock node's czxid, the
// zxid of the transaction that created it. A zxid is the ensemble's
// transaction id (epoch in the high 32 bits, counter in the low): it
// orders every write, survives leader changes (a new epoch starts above
// the old) and restarts (it is in the transaction log), and, unlike the
// node's sequence number (its parent's child counter), it does not start
// again should the lock's parent node be deleted and made anew. A grant
// is always a node created by that attempt, after every earlier grant's
// node, so each grant of a key carries a higher czxid than every earlier
// one. It costs two round trips per grant (the recipe hides its node's
// name: Children, then Get of the lowest).
type zkFenced struct{ o *zkOptions }

// Name returns "zk-fenced".
func (zkFenced) Name() string { return "zk-fenced" }

// Info describes zk-fenced.
func (s zkFenced) Info() impl.Info { return zkInfo(true, s.o.lostOn()) }

// New returns a zk-fenced Locker: zk-lock's, with Lease.Fence set.
func (s zkFenced) New(cfg impl.Config) (impl.Locker, error) {
	return newZKLocker(s.Name(), cfg, true, s.o.lostOn())
}

// Settings returns the effective library settings by flag name.
func (s zkFenced) Settings() map[string]string { return s.o.settings() }

// tune applies the zk-lost setting.
func (s zkFenced) tune(set map[string]string, _ time.Duration) (impl.Strategy, error) {
	o, err := s.o.tune(set)
	if err != nil {
		return nil, err
	}
	s.o = o
	return s, nil
}
