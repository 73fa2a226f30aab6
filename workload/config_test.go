package workload

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseCSKind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CSKind
		err  bool
	}{
		{"fixed", CSFixed, false},
		{"uniform", CSUniform, false},
		{"exponential", CSExponential, false},
		{"", "", true},
		{"normal", "", true},
	} {
		got, err := ParseCSKind(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseCSKind(%q) = %q, %v; want %q, err %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), "valid: fixed, uniform, exponential") {
			t.Errorf("ParseCSKind(%q): %v does not name the valid kinds", tc.in, err)
		}
	}
}

func TestParseRetry(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Retry
		err  bool
	}{
		{"none", Retry{Kind: RetryNone}, false},
		{"spin", Retry{Kind: RetrySpin}, false},
		{"fixed:5ms", Retry{Kind: RetryFixed, Base: 5 * time.Millisecond}, false},
		{"exponential:1ms:20ms", Retry{Kind: RetryExponential, Base: time.Millisecond, Max: 20 * time.Millisecond}, false},
		{"exponential:20ms:1ms", Retry{}, true},
		{"fixed", Retry{}, true},
		{"fixed:-1s", Retry{}, true},
		{"backoff", Retry{}, true},
		{"none:1ms", Retry{}, true},
	} {
		got, err := ParseRetry(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseRetry(%q) = %+v, %v; want %+v, err %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil {
			if back, _ := ParseRetry(got.String()); back != got {
				t.Errorf("String round trip of %q: %+v", tc.in, back)
			}
		}
	}
}

func TestRetryNext(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	if _, again := (Retry{Kind: "none"}).Next(1, r); again {
		t.Error("none retried")
	}
	exp := Retry{Kind: "exponential", Base: time.Millisecond, Max: 8 * time.Millisecond}
	for attempt := 1; attempt < 40; attempt++ {
		d, again := exp.Next(attempt, r)
		if !again || d < 0 || d > 8*time.Millisecond {
			t.Fatalf("attempt %d: %v %v, want 0..8ms", attempt, d, again)
		}
	}
}

func TestCSDist(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	u := CSDist{Kind: "uniform", Min: 2 * time.Millisecond, Max: 4 * time.Millisecond, TailShare: 0.25, Tail: time.Second}
	tails := 0
	for i := 0; i < 4000; i++ {
		d := u.Sample(r)
		switch {
		case d == time.Second:
			tails++
		case d < 2*time.Millisecond || d >= 4*time.Millisecond:
			t.Fatalf("sample %v outside [2ms,4ms)", d)
		}
	}
	if tails < 850 || tails > 1150 {
		t.Errorf("tail share %d/4000, want about 1000", tails)
	}
	e := CSDist{Kind: "exponential", Min: time.Millisecond, Max: 3 * time.Millisecond}
	for i := 0; i < 1000; i++ {
		if d := e.Sample(r); d > 3*time.Millisecond || d < 0 {
			t.Fatalf("exponential sample %v above cap", d)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	c, err := Config{TTL: 100 * time.Millisecond, Duration: time.Second}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Clients != 16 || c.Keys != 1 || c.CS.Min != 5*time.Millisecond || c.Retry.Kind != "exponential" || c.SafetyMargin != 10*time.Millisecond {
		t.Errorf("defaults: %+v", c)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Duration: time.Second}, "TTL must be positive"},
		{Config{TTL: time.Microsecond, Duration: time.Second}, "below Redis's 1 ms resolution"},
		{Config{TTL: time.Second}, "duration must be positive"},
		{Config{TTL: time.Second, Duration: time.Second, Clients: -1}, "-1 clients"},
		{Config{TTL: time.Second, Duration: time.Second, Reentrancy: 100}, "reentrancy depth 100"},
		// The default critical section (TTL/20 = 50 h) would hold the run for days.
		{Config{TTL: 1000 * time.Hour, Duration: 2 * time.Second}, "a critical section of up to 50h0m0s (fixed(50h0m0s)) is longer than the duration 2s"},
		{Config{TTL: time.Second, Duration: time.Second, CS: CSDist{Kind: "uniform", Min: time.Millisecond, Max: 2 * time.Second}}, "up to 2s"},
		{Config{TTL: time.Second, Duration: time.Second, CS: CSDist{Kind: "exponential", Min: 3 * time.Second}}, "up to 3s"},
		{Config{TTL: time.Second, Duration: time.Second, CS: CSDist{Kind: "fixed", Min: time.Millisecond, TailShare: 0.1, Tail: 2 * time.Second}}, "up to 2s"},
		{Config{TTL: time.Second, Duration: time.Second, CS: CSDist{Kind: "uniform", Min: 5 * time.Millisecond, Max: time.Millisecond}}, "the bound 1ms is below 5ms"},
		{Config{TTL: time.Second, Duration: time.Second, CS: CSDist{Kind: "exponential", Min: 5 * time.Millisecond, Max: time.Millisecond}}, "the bound 1ms is below 5ms"},
		{Config{TTL: time.Second, Duration: time.Second, Zipf: true}, "Zipf key choice over 1 key"},
	} {
		if _, err := tc.cfg.WithDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, ok := range []Config{
		{TTL: time.Second, Duration: 50 * time.Millisecond}, // CS 50 ms fits exactly
		{TTL: time.Second, Duration: time.Second, Zipf: true, Keys: 2},
		{TTL: time.Second, Duration: time.Second, CS: CSDist{Kind: "exponential", Min: 5 * time.Millisecond}},
	} {
		if _, err := ok.WithDefaults(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// TestProbeTimeout: the liveness probe's calls wait at least
// MinProbeTimeout, however short OpTimeout is.
func TestProbeTimeout(t *testing.T) {
	for _, tc := range []struct{ op, want time.Duration }{
		{time.Nanosecond, time.Second},
		{500 * time.Millisecond, time.Second},
		{3 * time.Second, 3 * time.Second},
	} {
		if got := (Config{OpTimeout: tc.op}).ProbeTimeout(); got != tc.want {
			t.Errorf("OpTimeout %v: probe timeout %v, want %v", tc.op, got, tc.want)
		}
	}
}
