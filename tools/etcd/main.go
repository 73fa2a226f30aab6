// Command etcd is the etcd server lockbench starts for its etcd
// strategies: upstream's own entry point (go.etcd.io/etcd/server/v3's
// main.go, which calls etcdmain.Main) built at the release go.mod pins.
// It is a module of its own so that the server's dependencies stay out of
// lockbench's module: `make etcd` builds it into bin/etcd.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
