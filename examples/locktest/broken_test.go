package tokenlock_test

import (
	"os"
	"testing"
)

// TestUncheckedRelease tests the lock with its release bug (a DEL that
// deletes any owner's lock): it fails, with the witness of two owners
// and the command that reproduces it. It runs only with
// TOKENLOCK_BROKEN=1.
func TestUncheckedRelease(t *testing.T) {
	if os.Getenv("TOKENLOCK_BROKEN") == "" {
		t.Skip("fails by design (a release without an ownership check): run it with TOKENLOCK_BROKEN=1")
	}
	testLock(t, true)
}
