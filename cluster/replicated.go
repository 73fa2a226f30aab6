package cluster

import (
	"context"
	"errors"
)

func (c *Cluster) startReplicated(ctx context.Context) error {
	return errors.New("cluster: replicated not implemented yet")
}

func (n *Node) sentinelCommand(port int) (string, []string, error) {
	return "", nil, errors.New("cluster: sentinel not implemented yet")
}
