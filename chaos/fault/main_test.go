package fault

import (
	"testing"

	"github.com/lockbench/lockbench/internal/redislog"
)

// TestMain silences go-redis's dial-failure lines: the tests kill and pause
// nodes on purpose (see internal/redislog).
func TestMain(m *testing.M) { redislog.RunTests(m) }
