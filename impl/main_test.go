package impl_test

import (
	"os"
	"testing"

	"github.com/lockbench/lockbench/internal/redislog"
)

// TestMain silences go-redis's dial-failure lines: the tests kill and pause
// nodes on purpose, and the lines would bury a failing test's message.
func TestMain(m *testing.M) {
	redislog.Quiet()
	os.Exit(m.Run())
}
