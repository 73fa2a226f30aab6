package preflight

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/errs"
)

// TestMeasureServerClock measures clocks against a real redis-server's
// TIME: the machine's own wall clock is at offset 0, a clock that reads
// 50 ms ahead (as a skewed history clock does) at -50 ms, and a clock that
// counts from a start (a history's) at the server's time of that start,
// each to within the measured half round trip plus TIME's microsecond
// (and the microsecond of time.Now's own reading); a server that is gone
// is an environment error naming it.
func TestMeasureServerClock(t *testing.T) {
	c, err := cluster.Start(ctxT(t), cluster.Topology{Kind: cluster.Single}, cluster.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	addr := c.Nodes()[0].Addr()
	start := time.Now()
	for _, tt := range []struct {
		name string
		now  func() int64
		want int64 // the offset: server time minus the clock's reading
	}{
		{"wall clock", func() int64 { return time.Now().UnixNano() }, 0},
		{"wall clock 50 ms ahead", func() int64 { return time.Now().Add(50 * time.Millisecond).UnixNano() }, -int64(50 * time.Millisecond)},
		{"since a start", func() int64 { return int64(time.Since(start)) }, start.UnixNano()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := MeasureServerClock(ctxT(t), addr, security.Security{}, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			bound := m.HalfRTTNs + 2*int64(time.Microsecond)
			if d := m.OffsetNs - tt.want; d < -bound || d > bound || m.HalfRTTNs <= 0 || m.Addr != addr {
				t.Errorf("offset %d ns, half round trip %v, addr %s; want %d ns ± %v at %s", m.OffsetNs, time.Duration(m.HalfRTTNs), m.Addr, tt.want, time.Duration(bound), addr)
			}
		})
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = MeasureServerClock(ctx, addr, security.Security{}, func() int64 { return time.Now().UnixNano() })
	if !errors.Is(err, errs.ErrEnvironment) || !strings.Contains(err.Error(), addr) {
		t.Errorf("a stopped server: error %v; want an environment error naming %s", err, addr)
	}
}
