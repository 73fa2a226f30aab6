// Command dockerimage builds lockbench's local Redis image for the docker
// backend (make docker-image): FROM scratch, with this machine's
// redis-server as /usr/bin/redis-server and the shared libraries ldd lists
// for it (dockerd.BuildImage). No registry is needed. Exit codes: 0 built
// (or already there), 3 no Docker daemon or no redis-server.
//
// Usage: go run ./scripts/dockerimage [-tag lockbench/redis:local] [-force]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/lockbench/lockbench/cluster/dockerd"
)

func main() {
	tag := flag.String("tag", dockerd.LocalImage, "image tag")
	force := flag.Bool("force", false, "rebuild even if the tag exists")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := dockerd.BuildImage(ctx, *tag, *force); err != nil {
		fmt.Fprintln(os.Stderr, "dockerimage:", err)
		os.Exit(3)
	}
	fmt.Printf("image %s ready: lockbench run --backend docker --redis-image %s ...\n", *tag, *tag)
}
