package locktest_test

import (
	"fmt"
	"testing"

	"github.com/lockbench/lockbench/locktest"
)

// Run in a team's test: the constructor builds one client's lock over the
// go-redis client locktest made for the redis-server it started; the
// claims decide what each scenario must show.
func ExampleRun() {
	testMyLock := func(t *testing.T) {
		locktest.Run(t, func(c locktest.Clients) (locktest.Lock, error) {
			return newTokenLock(true)(c) // your lock here, over c.Redis[0] with c.TTL
		}, locktest.Claims{AtomicAcquire: true, TokenRelease: true})
	}
	_ = testMyLock // func TestMyLock(t *testing.T) in a _test.go file
}

// A reentrant lock (a locktest.ReentrantLock: its leases carry their
// nesting Count and ReleaseLevel returns the count left) on Redis
// containers instead of redis-server processes: the image make
// docker-image builds.
func ExampleRun_reentrantOnDocker() {
	testMyLock := func(t *testing.T) {
		locktest.Run(t, newHashLock(false), locktest.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true},
			locktest.WithDocker("lockbench/redis:local"))
	}
	_ = testMyLock
}

// A lock on etcd dials the servers through Clients.Dial (newEtcdLock:
// clientv3 with grpc.WithContextDialer), so that a paused client's
// keep-alives pause with it.
func ExampleWithServer() {
	testMyLock := func(t *testing.T) {
		locktest.Run(t, newEtcdLock, locktest.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
			locktest.WithServer(locktest.Etcd))
	}
	_ = testMyLock
}

// The scenarios Run runs by default for a token lock on one Redis node:
// the ci profile's that apply, plus node-pause, which shows a release
// without an ownership check; go test -short runs two. A lock on etcd
// runs the ci profile's consensus scenarios.
func ExampleDefaultScenarios() {
	claims := locktest.Claims{AtomicAcquire: true, TokenRelease: true}
	fmt.Println(locktest.DefaultScenarios(claims, locktest.Redis, false))
	fmt.Println(locktest.DefaultScenarios(claims, locktest.Redis, true))
	claims.Renewal = true
	fmt.Println(locktest.DefaultScenarios(claims, locktest.Etcd, false))
	// Output:
	// [baseline long-cs gc-pause crash-between node-restart failover-lost-write partition-holder clock-jump node-pause]
	// [baseline node-pause]
	// [baseline gc-pause leader-kill]
}
