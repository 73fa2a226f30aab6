package workload

import "testing"

// TestRoundTrips: commands in flight together share one round trip;
// commands one after another take one each.
func TestRoundTrips(t *testing.T) {
	for _, c := range []struct {
		name string
		play func(r *RoundTrips)
		want int64
	}{
		{"one", func(r *RoundTrips) { r.start(); r.end() }, 1},
		{"sequential", func(r *RoundTrips) { r.start(); r.end(); r.start(); r.end() }, 2},
		{"parallel fan-out", func(r *RoundTrips) {
			for range 5 {
				r.start()
			}
			for range 5 {
				r.end()
			}
		}, 1},
		{"overlapping", func(r *RoundTrips) {
			r.start()
			r.start()
			r.end()
			r.start()
			r.end()
			r.end()
		}, 1},
	} {
		var r RoundTrips
		c.play(&r)
		if got := r.load(); got != c.want {
			t.Errorf("%s: %d round trips, want %d", c.name, got, c.want)
		}
	}
}
