package cluster_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/clockshim"
	"github.com/lockbench/lockbench/cluster/proxy"
)

// A Redlock run on 5 independent nodes, with a clock jump on one of them
// and a partition between the clients and another.
func Example() {
	ctx := context.Background()
	shim, err := clockshim.Build(ctx, os.TempDir())
	if err != nil {
		log.Fatal(err) // errors.Is(err, cluster.ErrEnvironment): exit code 3
	}
	topo, err := cluster.ParseTopology("independent:5")
	if err != nil {
		log.Fatal(err)
	}
	c, err := cluster.Start(ctx, topo, cluster.Options{ClockShim: shim})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()

	n1, n2 := c.Nodes()[0], c.Nodes()[1]
	p, err := proxy.New(ctx, "n2", n2.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	addrs := []string{n1.Addr(), p.Addr()} // clients use the proxy for n2
	fmt.Println(len(addrs))

	_ = n1.SetClockOffset(20 * time.Second) // n1's keys with TTL < 20 s expire now
	_ = p.Cut()                             // n2 unreachable through the proxy
	_ = p.Restore()
	_ = n1.Restart(ctx, 0) // empty again (PersistenceNone)
}
