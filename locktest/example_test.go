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

// The scenarios Run runs by default for a token lock on one Redis node:
// the ci profile's that apply, plus node-pause, which shows a release
// without an ownership check; go test -short runs two.
func ExampleDefaultScenarios() {
	claims := locktest.Claims{AtomicAcquire: true, TokenRelease: true}
	fmt.Println(locktest.DefaultScenarios(claims, locktest.Redis, false))
	fmt.Println(locktest.DefaultScenarios(claims, locktest.Redis, true))
	// Output:
	// [baseline long-cs gc-pause crash-between node-restart failover-lost-write partition-holder clock-jump node-pause]
	// [baseline node-pause]
}
