package bench

import (
	"context"
	"net"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// countHook counts the Redis commands the lock clients send (a pipeline
// counts each command), for the client-side "commands per grant"
// (results.Run.ClientCommandsPerGrant). Connection set-up commands that
// go-redis sends through its hooks (HELLO, CLIENT ...) are left out, as the
// server-side count leaves them out (harnessCommands), so the two compare.
type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !harnessCommands[strings.ToLower(cmd.Name())] {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if !harnessCommands[strings.ToLower(c.Name())] {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}
