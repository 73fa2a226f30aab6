package observer

import (
	"testing"

	"github.com/lockbench/lockbench/internal/redislog"
)

// TestMain silences go-redis's dial-failure lines: a test reads a node
// nobody listens on, on purpose (see internal/redislog).
func TestMain(m *testing.M) { redislog.RunTests(m) }
