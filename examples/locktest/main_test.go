package tokenlock_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the test binary when a goroutine outlives its tests:
// locktest.Run stops everything it starts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
