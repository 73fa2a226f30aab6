package noise

import (
	"bufio"
	"context"
	"net"
	"time"

	"github.com/montanaflynn/stats"
)

// pingTimeout bounds one PING before the run (dial included).
const pingTimeout = 200 * time.Millisecond

// pinger PINGs one Redis server over one connection, redialling after a
// failure, and keeps the round-trip times.
type pinger struct {
	addr   string
	conn   net.Conn
	rd     *bufio.Reader
	rtts   []float64 // ms
	failed int
	// rt, when set, is the round trip instead of a PING (Probe).
	rt func(ctx context.Context) error
}

// ping sends one PING ("PING\r\n", an inline command) and waits for one
// reply line (+PONG, or an error reply such as -NOAUTH: a round trip all
// the same) within timeout; the round trip is recorded, a failure counted.
func (p *pinger) ping(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if p.rt != nil {
		rctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		t0 := time.Now()
		if err := p.rt(rctx); err != nil {
			p.failed++
			return
		}
		p.rtts = append(p.rtts, float64(time.Since(t0))/float64(time.Millisecond))
		return
	}
	if p.conn == nil {
		d := net.Dialer{Deadline: deadline}
		c, err := d.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			p.failed++
			return
		}
		p.conn, p.rd = c, bufio.NewReader(c)
	}
	p.conn.SetDeadline(deadline)
	t0 := time.Now()
	_, err := p.conn.Write([]byte("PING\r\n"))
	if err == nil {
		_, err = p.rd.ReadSlice('\n')
	}
	if err != nil {
		p.failed++
		p.close()
		return
	}
	p.rtts = append(p.rtts, float64(time.Since(t0))/float64(time.Millisecond))
}

func (p *pinger) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn, p.rd = nil, nil
	}
}

// rtt summarises the round trips so far.
func (p *pinger) rtt() RTT {
	r := RTT{Server: p.addr, N: len(p.rtts), Failed: p.failed}
	if len(p.rtts) == 0 {
		return r
	}
	// Percentiles as stats.Percentiles computes them (montanaflynn/stats).
	d := stats.Float64Data(p.rtts)
	r.P50Ms, _ = d.Percentile(50)
	r.P99Ms, _ = d.Percentile(99)
	return r
}

// pingN makes n round trips with p (PINGs on one connection, or its
// probe's), plus one untimed one that opens the connection, and returns
// them.
func pingN(ctx context.Context, p *pinger, n int) RTT {
	defer p.close()
	p.ping(ctx, pingTimeout) // dial and warm up: not a round trip of an open connection
	p.rtts, p.failed = p.rtts[:0], 0
	for range n {
		if ctx.Err() != nil {
			break
		}
		p.ping(ctx, pingTimeout)
	}
	return p.rtt()
}
