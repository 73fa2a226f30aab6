package proxy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/internal/redislog"
)

// TestMain silences go-redis's dial-failure lines: the tests cut and
// blackhole links on purpose (see internal/redislog).
func TestMain(m *testing.M) { redislog.RunTests(m) }

// startT starts one real redis-server (cluster's process backend) for the
// proxy to forward to, stopped when the test ends, also on failure.
func startT(t *testing.T) *cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

// client returns a go-redis client for addr with short timeouts and no
// retries, closed when the test ends.
func client(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{
		Addr:          addr,
		DialTimeout:   500 * time.Millisecond,
		ReadTimeout:   time.Second,
		WriteTimeout:  time.Second,
		MaxRetries:    -1,
		DialerRetries: 1,
		PoolSize:      2,
	})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// ctxT is a context of 10 s, cancelled when the test ends.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// poll calls f every 20 ms until it reports done, returns an error, or
// timeout passes; what names the condition in the timeout error.
func poll(ctx context.Context, timeout time.Duration, what string, f func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		done, err := f()
		if done {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
