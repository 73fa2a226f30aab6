// Package workload is lockbench's generator: closed-loop clients, each a
// distinct lock owner with its own Redis clients, that acquire a key, run a
// critical section against the protected resource and release, while every
// operation is recorded to the history with one monotonic clock.
//
// A critical section (CS) is: read the protected resource, wait the CS
// duration, check the lease under the usage policy (validity deadline,
// Lost), then write value+1 with the lease's fencing token. The Faults
// interface lets a nemesis act at named points of that loop.
package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/resource"
)

// CSKind is the shape of a critical-section duration distribution.
type CSKind string

// Critical-section distributions; the zero value "" is CSFixed.
const (
	// CSFixed: every critical section takes Min.
	CSFixed CSKind = "fixed"
	// CSUniform: uniformly between Min and Max.
	CSUniform CSKind = "uniform"
	// CSExponential: exponential with mean Min, capped at Max when Max > 0.
	CSExponential CSKind = "exponential"
)

// ParseCSKind parses "fixed", "uniform" or "exponential"; the error names
// the valid ones.
func ParseCSKind(s string) (CSKind, error) {
	switch k := CSKind(s); k {
	case CSFixed, CSUniform, CSExponential:
		return k, nil
	}
	return "", fmt.Errorf("unknown critical-section distribution %q (valid: fixed, uniform, exponential)", s)
}

// CSDist is the distribution of critical-section durations (the wait between
// the resource read and the write).
type CSDist struct {
	// Kind is the distribution's shape; "" is CSFixed.
	Kind CSKind
	// Min and Max bound the duration; see Kind.
	Min, Max time.Duration
	// TailShare is the share (0..1) of critical sections that take Tail instead.
	TailShare float64
	// Tail is the duration of a tail critical section (e.g. 2×TTL).
	Tail time.Duration
}

// Sample draws one duration.
func (d CSDist) Sample(r *rand.Rand) time.Duration {
	if d.TailShare > 0 && r.Float64() < d.TailShare {
		return d.Tail
	}
	switch d.Kind {
	case CSUniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)))
	case CSExponential:
		v := time.Duration(r.ExpFloat64() * float64(d.Min))
		if d.Max > 0 && v > d.Max {
			v = d.Max
		}
		return v
	default:
		return d.Min
	}
}

// Longest is the longest wait the distribution plans: Min (fixed), the
// larger of Min and Max (uniform), Max for a capped exponential and its
// mean Min for an uncapped one (a sample may exceed it), or Tail when some
// critical sections take it and it is longer.
func (d CSDist) Longest() time.Duration {
	l := d.Min
	if d.Kind != CSFixed && d.Max > l {
		l = d.Max
	}
	if d.TailShare > 0 && d.Tail > l {
		l = d.Tail
	}
	return l
}

// String describes the distribution, e.g. "uniform(1ms,5ms) tail 10%×200ms".
func (d CSDist) String() string {
	var s string
	switch d.Kind {
	case CSUniform:
		s = fmt.Sprintf("uniform(%v,%v)", d.Min, d.Max)
	case CSExponential:
		s = fmt.Sprintf("exponential(mean %v, max %v)", d.Min, d.Max)
	default:
		s = fmt.Sprintf("fixed(%v)", d.Min)
	}
	if d.TailShare > 0 {
		s += fmt.Sprintf(" tail %g%%×%v", d.TailShare*100, d.Tail)
	}
	return s
}

// RetryKind is the shape of a retry policy.
type RetryKind string

// Retry policies.
const (
	// RetryNone: give up after one attempt.
	RetryNone RetryKind = "none"
	// RetrySpin: retry at once.
	RetrySpin RetryKind = "spin"
	// RetryFixed: wait Base before every retry.
	RetryFixed RetryKind = "fixed"
	// RetryExponential: wait a random time up to Base·2^(attempt-1),
	// capped at Max (full jitter).
	RetryExponential RetryKind = "exponential"
)

// Retry is a retry policy for a failed acquire: how long to wait before
// attempt number attempt (1 = the first retry).
type Retry struct {
	// Kind is the policy's shape; "" takes Config's default retry
	// policy (Config.WithDefaults); Next treats it as RetryNone.
	Kind RetryKind
	// Base is the fixed delay, or the exponential base.
	Base time.Duration
	// Max caps the exponential delay.
	Max time.Duration
}

// ParseRetry parses "none", "spin", "fixed:5ms" or "exponential:1ms:20ms"
// (base, cap).
func ParseRetry(s string) (Retry, error) {
	parts := strings.Split(s, ":")
	bad := fmt.Errorf("bad retry policy %q (valid: none, spin, fixed:DUR, exponential:BASE:MAX, e.g. exponential:1ms:20ms)", s)
	switch k := RetryKind(parts[0]); k {
	case RetryNone, RetrySpin:
		if len(parts) != 1 {
			return Retry{}, bad
		}
		return Retry{Kind: k}, nil
	case RetryFixed:
		if len(parts) != 2 {
			return Retry{}, bad
		}
		d, err := time.ParseDuration(parts[1])
		if err != nil || d < 0 {
			return Retry{}, bad
		}
		return Retry{Kind: RetryFixed, Base: d}, nil
	case RetryExponential:
		if len(parts) != 3 {
			return Retry{}, bad
		}
		b, err1 := time.ParseDuration(parts[1])
		m, err2 := time.ParseDuration(parts[2])
		if err1 != nil || err2 != nil || b <= 0 || m < b {
			return Retry{}, bad
		}
		return Retry{Kind: RetryExponential, Base: b, Max: m}, nil
	}
	return Retry{}, bad
}

// Next returns the wait before retry number attempt (1-based) and false when
// the policy gives up.
func (p Retry) Next(attempt int, r *rand.Rand) (time.Duration, bool) {
	switch p.Kind {
	case RetryNone:
		return 0, false
	case RetrySpin:
		return 0, true
	case RetryFixed:
		return p.Base, true
	case RetryExponential:
		d := float64(p.Base) * math.Pow(2, float64(attempt-1))
		if d > float64(p.Max) || math.IsInf(d, 0) {
			d = float64(p.Max)
		}
		return time.Duration(r.Int64N(int64(d) + 1)), true
	}
	return 0, false
}

// String is the policy in ParseRetry's syntax.
func (p Retry) String() string {
	switch p.Kind {
	case RetryFixed:
		return "fixed:" + p.Base.String()
	case RetryExponential:
		return "exponential:" + p.Base.String() + ":" + p.Max.String()
	}
	return string(p.Kind)
}

// Config is one run's workload. Zero values select the defaults given.
type Config struct {
	// Clients is the number of concurrent clients (owners). Default 16.
	Clients int
	// Keys is the number of lock keys; 1 = fully contended. Default 1.
	Keys int
	// KeyPrefix prefixes key names ("lb:k0", ...). Default "lb:".
	KeyPrefix string
	// Zipf chooses keys with a Zipf distribution (s=1.1) instead of uniformly.
	Zipf bool
	// OwnKeys gives every client a key of its own (client i always locks
	// key i; Keys is set to Clients): no contention at all, to measure the
	// harness against redis-benchmark (lockbench perf).
	OwnKeys bool
	// TTL is the lock TTL. Required.
	TTL time.Duration
	// Duration is how long clients keep starting new holds. Required.
	Duration time.Duration
	// CS is the critical-section duration. Default fixed(TTL/20).
	CS CSDist
	// Think is the pause between a release and the next acquire. Default 0.
	Think time.Duration
	// Retry is the retry policy after a failed acquire. Default
	// exponential with base TTL/50 (at least 100µs) and cap TTL/5.
	Retry Retry
	// Reentrancy is the nesting depth of acquires per hold (reentrant
	// strategies). Default 1.
	Reentrancy int
	// Fencing is the resource's fencing mode. Default FencingOff.
	Fencing resource.Fencing
	// Policy is the usage policy (default: the strategy's own, set by the caller).
	Policy impl.Policy
	// SafetyMargin is subtracted from the validity deadline when the policy
	// checks validity: the write must be done by then. Default TTL/10, at least 2 ms.
	SafetyMargin time.Duration
	// OpTimeout bounds each lock call: its context's deadline, which bounds
	// every dial, read and write of the call (see callContext). Default 500 ms.
	OpTimeout time.Duration
	// Seed seeds every random choice of the run.
	Seed int64
}

// WithDefaults returns c with zero fields set to their defaults, or an error
// naming the first impossible value.
func (c Config) WithDefaults() (Config, error) {
	if c.TTL <= 0 {
		return c, errors.New("workload: TTL must be positive (e.g. --ttl 100ms)")
	}
	if c.TTL < time.Millisecond {
		return c, fmt.Errorf("workload: TTL %v is below Redis's 1 ms resolution", c.TTL)
	}
	if c.Duration <= 0 {
		return c, errors.New("workload: duration must be positive (e.g. --duration 2s)")
	}
	if c.Clients == 0 {
		c.Clients = 16
	}
	if c.Clients < 0 || c.Clients > 10000 {
		return c, fmt.Errorf("workload: %d clients: give 1 to 10000 clients (--clients)", c.Clients)
	}
	if c.OwnKeys {
		c.Keys = c.Clients
	}
	if c.Keys == 0 {
		c.Keys = 1
	}
	if c.Keys < 0 || c.Keys > 1000000 {
		return c, fmt.Errorf("workload: %d keys: give 1 to 1000000 keys (--keys)", c.Keys)
	}
	if c.Zipf && c.Keys < 2 {
		return c, fmt.Errorf("workload: Zipf key choice over %d key: nothing to choose; give 2 or more keys (--keys) or drop --zipf", c.Keys)
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = "lb:"
	}
	if c.CS.Kind == "" && c.CS.Min == 0 {
		c.CS = CSDist{Kind: CSFixed, Min: c.TTL / 20, TailShare: c.CS.TailShare, Tail: c.CS.Tail}
	}
	if (c.CS.Kind == CSUniform || c.CS.Kind == CSExponential) && c.CS.Max > 0 && c.CS.Max < c.CS.Min {
		return c, fmt.Errorf("workload: critical section %v: the bound %v is below %v; give a --cs-max of at least --cs-min (default TTL/20)", c.CS, c.CS.Max, c.CS.Min)
	}
	if l := c.CS.Longest(); l > c.Duration {
		return c, fmt.Errorf("workload: a critical section of up to %v (%v) is longer than the duration %v: the run would outlast it; give a --duration of at least %v, or a shorter critical section (--cs-min, --cs-max, --cs-tail; default TTL/20, so a shorter --ttl)", l, c.CS, c.Duration, l)
	}
	if c.Retry.Kind == "" {
		base := c.TTL / 50
		if base < 100*time.Microsecond {
			base = 100 * time.Microsecond
		}
		c.Retry = Retry{Kind: RetryExponential, Base: base, Max: c.TTL / 5}
	}
	if c.Reentrancy == 0 {
		c.Reentrancy = 1
	}
	if c.Reentrancy < 0 || c.Reentrancy > 64 {
		return c, fmt.Errorf("workload: reentrancy depth %d: want 1..64", c.Reentrancy)
	}
	if c.Fencing == "" {
		c.Fencing = resource.FencingOff
	}
	if c.SafetyMargin == 0 {
		c.SafetyMargin = c.TTL / 10
		if c.SafetyMargin < 2*time.Millisecond {
			c.SafetyMargin = 2 * time.Millisecond
		}
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = 500 * time.Millisecond
	}
	return c, nil
}

// MinProbeTimeout is the shortest timeout of a liveness probe's Redis call
// (see ProbeTimeout).
const MinProbeTimeout = time.Second

// ProbeTimeout is the timeout of each Redis call of the liveness probe:
// OpTimeout, but at least MinProbeTimeout, so that a short OpTimeout (which
// a run may set to study timeouts) cannot make the probe time out on a free
// key and report a deadlock it did not see.
func (c Config) ProbeTimeout() time.Duration { return max(c.OpTimeout, MinProbeTimeout) }

// Key returns the name of key number i.
func (c Config) Key(i int) string { return c.KeyPrefix + "k" + strconv.Itoa(i) }
