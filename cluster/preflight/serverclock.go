package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/cluster/security"
)

// ServerClock is a local clock measured against a Redis server's own
// clock (MeasureServerClock): server time = local reading + OffsetNs, to
// within HalfRTTNs (plus the microsecond of TIME's resolution).
type ServerClock struct {
	// Addr is the server measured against, "host:port".
	Addr string
	// OffsetNs is the server's TIME (ns since the Unix epoch) minus the
	// local clock's reading (ns) at the midpoint of the exchange with the
	// shortest round trip.
	OffsetNs int64
	// HalfRTTNs is half that exchange's round trip (ns): the server read
	// its clock somewhere inside it, so OffsetNs is right to within it.
	HalfRTTNs int64
}

// ClockExchanges is how many TIME exchanges MeasureServerClock makes; it
// keeps the one with the shortest round trip (on a busy machine most
// exchanges wait for a core, and their bounds are wide).
const ClockExchanges = 8

// MeasureServerClock measures the local clock now (ns; e.g. a history's
// clock) against the clock of the Redis server at addr: ClockExchanges
// exchanges of Redis TIME, each between two readings of now, after a PING
// that opens the connection; the exchange with the shortest round trip
// gives the offset and its bound. The server and now must not be paused
// meanwhile (a pause only widens the bound). ctx bounds the exchanges.
// A server that does not answer gives an error wrapping errs.ErrEnvironment
// that names addr; one that refuses TIME (an ACL without it: NOPERM) an
// error naming the command and the fix.
func MeasureServerClock(ctx context.Context, addr string, sec security.Security, now func() int64) (ServerClock, error) {
	rc := keyClient(addr, sec)
	defer rc.Close()
	if err := rc.Ping(ctx).Err(); err != nil {
		return ServerClock{}, sec.Unreachable(addr, "PING (before measuring its clock)", err)
	}
	best := ServerClock{Addr: addr, HalfRTTNs: -1}
	for range ClockExchanges {
		t0 := now()
		st, err := rc.Time(ctx).Result()
		t1 := now()
		if err != nil && !strings.HasPrefix(err.Error(), "NOPERM") {
			return ServerClock{}, sec.Unreachable(addr, "TIME (the clock measurement for cross-host checks)", err)
		}
		if err != nil {
			return ServerClock{}, fmt.Errorf("cluster: %s: TIME (the clock measurement for cross-host checks): %s: allow TIME to lockbench's user (ACL SETUSER NAME +time)", addr, sec.Redact(err.Error()))
		}
		half := (t1 - t0) / 2
		if best.HalfRTTNs < 0 || half < best.HalfRTTNs {
			best.HalfRTTNs, best.OffsetNs = half, st.UnixNano()-(t0+half)
		}
	}
	return best, nil
}
