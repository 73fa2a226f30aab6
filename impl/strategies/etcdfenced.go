package strategies

import (
	"time"

	"github.com/lockbench/lockbench/impl"
)

// etcdFenced is etcd-mutex with a fencing token: the create revision of
// the Mutex's key. etcd's revision counts every write to the cluster and
// never goes back (it survives leader changes and restarts: it is in the
// Raft log), and a grant always creates its key in the Txn that grants
// it (a session whose acquire outcome is unknown is abandoned, so no key
// is reused), so each grant of a key carries a higher revision than every
// earlier grant of it.
type etcdFenced struct{}

// Name returns "etcd-fenced".
func (etcdFenced) Name() string { return "etcd-fenced" }

// Info describes etcd-fenced.
func (etcdFenced) Info() impl.Info { return etcdInfo(true) }

// New returns an etcd-fenced Locker: etcd-mutex's, with Lease.Fence set.
func (s etcdFenced) New(cfg impl.Config) (impl.Locker, error) {
	return newEtcdLocker(s.Name(), cfg, true)
}

// ServerTTL returns the lease TTL etcd enforces for a run TTL ttl: ttl
// rounded up to whole seconds, at least 1 s.
func (etcdFenced) ServerTTL(ttl time.Duration) time.Duration { return etcdLeaseTTL(ttl) }
