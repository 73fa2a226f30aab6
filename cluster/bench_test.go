package cluster

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStartIndependent5 measures Start of a 5-node independent cluster
// up to the point where every node answers PING, plus its Stop (reported
// separately as stop-ms/op). Target (docs/performance.md): up in ≤ 300 ms.
func BenchmarkStartIndependent5(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var up, stop time.Duration
	for b.Loop() {
		t0 := time.Now()
		c, err := Start(ctx, Topology{Kind: Independent, Nodes: 5}, Options{})
		if err != nil {
			b.Fatalf("Start: %v", err)
		}
		t1 := time.Now()
		if err := c.Stop(); err != nil {
			b.Fatalf("Stop: %v", err)
		}
		up += t1.Sub(t0)
		stop += time.Since(t1)
	}
	b.ReportMetric(up.Seconds()*1000/float64(b.N), "up-ms/op")
	b.ReportMetric(stop.Seconds()*1000/float64(b.N), "stop-ms/op")
}
