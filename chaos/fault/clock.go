package fault

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl/adapterclient"
)

// ClockJump moves a node's wall clock forward by step, on top of its
// earlier jumps (the LD_PRELOAD clock shim, cluster.Node.SetClockOffset):
// Redis expires keys by the wall clock, so every key whose expiry the
// clock passes is gone at once. Heal leaves the offset: a clock that
// jumped keeps running at the normal rate. Evidence: the server's TIME
// reply before and after (timeJump.String).
type ClockJump struct {
	Clocks *Clocks
	Node   *cluster.Node
	Step   time.Duration
}

// Name is the primitive's name, "clock-jump" (Fault.Name).
func (*ClockJump) Name() string { return "clock-jump" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ClockJump) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureClock} }

// Inject jumps the clock and reads TIME around the jump.
func (j *ClockJump) Inject(ctx context.Context) (string, error) {
	tj, err := j.Clocks.jump(ctx, j.Node, j.Step)
	return tj.String(), err
}

// Heal has nothing to undo (see ClockJump).
func (*ClockJump) Heal(context.Context) (string, error) { return "", nil }

// clocks keeps the cumulative clock offset of each node, since
// cluster.Node.SetClockOffset takes an absolute offset. Safe for
// concurrent use.
type Clocks struct {
	mu  sync.Mutex
	off map[*cluster.Node]time.Duration
}

// NewClocks returns the clock offsets of one run, none set yet.
func NewClocks() *Clocks { return &Clocks{off: map[*cluster.Node]time.Duration{}} }

// timeJump is the evidence of one clock jump: the node's TIME reply right
// before and right after it.
type timeJump struct {
	Node          string
	Step, Offset  time.Duration
	Before, After time.Time
}

// Moved is how far the node's TIME reply moved across the jump (the jump
// plus the real time the jump took).
func (j timeJump) Moved() time.Duration { return j.After.Sub(j.Before) }

// String is the note text, e.g. "n1 clock +100ms (offset +200ms): TIME
// 1712345678.123456 → 1712345678.226001 (moved +102.545ms)"; tests parse
// "moved +Xms".
func (j timeJump) String() string {
	return fmt.Sprintf("%s clock +%v (offset +%v): TIME %s → %s (moved %+.3fms)", j.Node, j.Step, j.Offset,
		unixMicro(j.Before), unixMicro(j.After), float64(j.Moved())/float64(time.Millisecond))
}

func unixMicro(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// jump moves n's wall clock forward by step on top of its earlier jumps
// and reads the server's TIME reply before and after. The offset is kept
// even if TIME cannot be read; errors start with the node's name.
func (c *Clocks) jump(ctx context.Context, n *cluster.Node, step time.Duration) (timeJump, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := timeJump{Node: n.Name(), Step: step, Offset: c.off[n] + step}
	var err1, err2, err3 error
	j.Before, err1 = serverTime(ctx, n)
	if err2 = n.SetClockOffset(j.Offset); err2 == nil {
		c.off[n] = j.Offset
	}
	j.After, err3 = serverTime(ctx, n)
	if err := errors.Join(err1, err2, err3); err != nil {
		return j, fmt.Errorf("%s: %w", n.Name(), err)
	}
	return j, nil
}

// serverTime returns the TIME reply of the redis-server at addr, through a
// connection of its own (not the workload's), within 1 s.
func serverTime(ctx context.Context, n *cluster.Node) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c := redis.NewClient(n.Security().Apply(&redis.Options{Addr: n.Addr(), MaxRetries: -1, PoolSize: 1, DialerRetries: 1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}))
	defer c.Close()
	t, err := c.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("TIME on %s: %w", n.Name(), err)
	}
	return t, nil
}

// ClientClockStep steps the wall clock of one client's adapter process
// (adapterclient.ClockStepper: the clock-offset preload, Setup.ClientClock) by
// step from the offset in force: a clock that NTP or an operator steps,
// or a virtual machine's after a migration. Only the process's realtime
// clocks move, never its monotonic clock, so a lock that counts its lease
// on a monotonic clock does not notice, and one that counts it on the
// wall clock does. Heal leaves the offset: a stepped clock keeps running
// at the normal rate. Evidence: the offset file read back and the preload
// mapped into the process, e.g. "client 3's adapter stepped -400ms: pid
// 4242 wall clock offset 0s → -400ms (offset file reads -400000000 ns;
// clock shim mapped)".
type ClientClockStep struct {
	Clock   adapterclient.ClockStepper
	Client  int
	Process adapterclient.ClientProcess
	Step    time.Duration
	// offset is the process's offset after Inject.
	Offset time.Duration
}

// Name is the primitive's name, "client-clock-step" (Fault.Name).
func (*ClientClockStep) Name() string { return "client-clock-step" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ClientClockStep) Needs() []cluster.Feature { return nil }

// Inject steps the process's clock and checks the new offset is in force.
func (s *ClientClockStep) Inject(context.Context) (string, error) {
	d, ev, err := s.Clock.StepClock(s.Step)
	if err != nil {
		return "", fmt.Errorf("client %d: %w", s.Client, err)
	}
	s.Offset = d
	return fmt.Sprintf("client %d's adapter stepped %+v: %s%s", s.Client, s.Step, ev, sharedNote(s.Process, "step with it")), nil
}

// Heal has nothing to undo (see ClientClockStep).
func (*ClientClockStep) Heal(context.Context) (string, error) { return "", nil }
