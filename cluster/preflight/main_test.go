package preflight

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redislog"
)

// TestMain silences go-redis's dial-failure lines: the tests stop servers
// on purpose (see internal/redislog).
func TestMain(m *testing.M) { redislog.RunTests(m) }

// ctxT is a context of 10 s, cancelled when the test ends.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
