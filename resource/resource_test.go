package resource

import "testing"

// TestResourceFencing: each fencing mode rejects what it must (a stale
// write from writes on, a stale read with all) and accepts an equal token.
func TestResourceFencing(t *testing.T) {
	for _, tc := range []struct {
		mode               Fencing
		staleWrite, staleR bool // accepted?
	}{
		{FencingOff, true, true},
		{FencingWrites, false, true},
		{FencingAll, false, false},
	} {
		r := New(tc.mode)
		if !r.Write("k", 1, 5) {
			t.Fatalf("%s: first write rejected", tc.mode)
		}
		if got := r.Write("k", 2, 4); got != tc.staleWrite {
			t.Errorf("%s: stale write accepted=%v, want %v", tc.mode, got, tc.staleWrite)
		}
		if _, got := r.Read("k", 3); got != tc.staleR {
			t.Errorf("%s: stale read accepted=%v, want %v", tc.mode, got, tc.staleR)
		}
		if !r.Write("k", 9, 5) {
			t.Errorf("%s: equal token rejected", tc.mode)
		}
	}
}
