package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWriteLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	w, err := Create(path, Header{Strategy: "token-lua", Scenario: "baseline", Seed: 7, TTLMs: 100, Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				w.Record(Operation{Client: c, Kind: Acquire, Key: "k", Invoke: int64(i), Complete: int64(i + 1), Result: OK, Hold: int64(c*1000 + i)})
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Len() != 800 {
		t.Errorf("Len %d after Close, want 800", w.Len())
	}
	h, ops, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.SchemaVersion != SchemaVersion || h.Strategy != "token-lua" || h.Seed != 7 {
		t.Errorf("header %+v", h)
	}
	if len(ops) != 800 {
		t.Errorf("%d operations, want 800", len(ops))
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	header := `{"schema_version":1,"strategy":"s","scenario":"x","seed":1,"clients":1,"keys":1,"ttl_ms":100,"fencing":"off"}`
	good := `{"client":0,"stream":0,"kind":"acquire","key":"k","invoke_ns":1,"complete_ns":2,"result":"ok"}`
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "empty file"},
		{"bad header", "{not json\n", "line 1"},
		{"wrong version", `{"schema_version":2}` + "\n", "schema_version 2"},
		{"cut line", header + "\n" + good + "\n" + `{"client":0,"kind":` + "\n", "line 3"},
		{"unknown kind", header + "\n" + strings.Replace(good, "acquire", "grab", 1) + "\n", `line 2: unknown kind "grab"`},
		{"unknown reason", header + "\n" + strings.Replace(good, `"result":"ok"`, `"result":"fail","reason":"gone"`, 1) + "\n", `line 2: unknown reason "gone" (want one of expired, taken, unavailable, cancelled, unknown)`},
		{"unknown result", header + "\n" + strings.Replace(good, `"ok"`, `"maybe"`, 1) + "\n", "line 2: unknown result"},
		{"time backwards", header + "\n" + strings.Replace(good, `"complete_ns":2`, `"complete_ns":0`, 1) + "\n", "line 2: complete_ns 0 is before invoke_ns 1"},
		{"huge line", header + "\n" + good + "\n" + strings.Repeat("x", maxLine+1) + "\n", "line 3 is longer than 16 MiB: not a lockbench history line"},
		{"unknown field", header + "\n" + strings.Replace(good, `"key"`, `"kee"`, 1) + "\n", `line 2: json: unknown field "kee"`},
	} {
		_, _, err := Parse(strings.NewReader(tc.text))
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want ErrCorrupt naming %q", tc.name, err, tc.want)
		}
	}
	if _, ops, err := Parse(strings.NewReader(header + "\n" + good + "\n\n")); err != nil || len(ops) != 1 {
		t.Errorf("valid history: %v, %d ops", err, len(ops))
	}
	// Protocol 2's additions: a stated reason, a token on a failed acquire, a check.
	v2 := strings.Replace(good, `"result":"ok"`, `"token":"c0:1","result":"fail","reason":"taken"`, 1) + "\n" +
		`{"client":0,"stream":0,"kind":"check","key":"k","hold":1,"invoke_ns":3,"complete_ns":4,"result":"ok","value":1}`
	if _, ops, err := Parse(strings.NewReader(header + "\n" + v2 + "\n")); err != nil || len(ops) != 2 || ops[0].Reason != ReasonTaken || ops[0].Token != "c0:1" || ops[1].Kind != Check {
		t.Errorf("protocol-2 history: %v, %+v", err, ops)
	}
}

func TestClock(t *testing.T) {
	c := NewClock()
	a := c.Now()
	b := c.Now()
	if b < a || a < 0 {
		t.Errorf("clock went backwards: %d then %d", a, b)
	}
	if c.At(c.Start()) != 0 {
		t.Error("At(Start) != 0")
	}
	for _, skew := range []time.Duration{0, 50 * time.Millisecond} {
		c := NewSkewedClock(skew)
		if got := c.At(c.Start()); got != int64(skew) {
			t.Errorf("skew %v: At(Start) = %d, want %d", skew, got, int64(skew))
		}
		if got := c.At(c.Start().Add(time.Second)); got != int64(time.Second+skew) {
			t.Errorf("skew %v: At(Start+1s) = %d, want %d", skew, got, int64(time.Second+skew))
		}
		if now := c.Now(); now < int64(skew) || c.Skew() != skew {
			t.Errorf("skew %v: Now() = %d below the skew, or Skew() = %v", skew, now, c.Skew())
		}
		if c.At(time.Time{}) != 0 {
			t.Errorf("skew %v: At(zero time) != 0 (0 means no validity deadline)", skew)
		}
	}
	var ids IDs
	if ids.NextHold() != 1 || ids.NextHold() != 2 || ids.NextStream() != 0 {
		t.Error("ids do not start at hold 1, stream 0")
	}
}

// TestBuffersKeepEveryOperation records from 8 Buffers (enough operations
// for several chunks each) beside direct Records, and checks that the file
// holds every operation once, each Buffer's in its own order, and that an
// unflushed Buffer's operations are the only ones missing.
func TestBuffersKeepEveryOperation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	w, err := Create(path, Header{Strategy: "token-lua", Scenario: "baseline", Seed: 1, TTLMs: 100, Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	const perClient = 3000 // ~450 KB per client: many 16 KiB chunks
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			b := w.NewBuffer()
			for i := range perClient {
				b.Record(Operation{Client: c, Stream: c, Kind: Acquire, Key: "lb:k0", Token: "c-token-with-some-length",
					Invoke: int64(i), Complete: int64(i + 1), Result: OK, Hold: int64(c*perClient + i + 1)})
			}
			b.Flush()
		})
	}
	for i := range 100 {
		w.Record(Operation{Client: -1, Stream: -1, Kind: Nemesis, Invoke: int64(i), Complete: int64(i), Result: OK})
	}
	wg.Wait()
	lost := w.NewBuffer()
	lost.Record(Operation{Client: 99, Kind: Acquire, Key: "lb:k0", Result: OK, Hold: 1})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lost.Flush() // after Close: dropped, not a panic or a block
	if w.Len() != 8*perClient+100 {
		t.Errorf("Len %d after Close, want %d", w.Len(), 8*perClient+100)
	}
	_, ops, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 8*perClient+100 {
		t.Fatalf("%d operations in the file, want %d", len(ops), 8*perClient+100)
	}
	next := map[int]int64{}
	for _, op := range ops {
		if op.Client < 0 {
			continue
		}
		if op.Client == 99 {
			t.Fatal("an operation of a Buffer flushed after Close was written")
		}
		if op.Invoke != next[op.Client] {
			t.Fatalf("client %d: operation %d where %d was next: a Buffer's order was not kept", op.Client, op.Invoke, next[op.Client])
		}
		next[op.Client]++
	}
}

// TestEndLineCatchesACutHistory: a history lockbench wrote ends with an end
// line; the same file cut at a line boundary (a killed run) is refused, as
// is one whose end line miscounts, while a history without the header's
// end_line promise (another tool's) needs none.
func TestEndLineCatchesACutHistory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	w, err := Create(path, Header{Strategy: "token-lua", Scenario: "baseline", Seed: 1, TTLMs: 100, Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	b := w.NewBuffer()
	for i := range 10 {
		b.Record(Operation{Client: 0, Kind: Acquire, Key: "k", Invoke: int64(i), Complete: int64(i + 1), Result: Fail})
	}
	b.Flush()
	w.Record(Operation{Client: -1, Kind: Nemesis, Invoke: 1, Complete: 2, Result: OK})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, ops, err := Load(path)
	if err != nil || len(ops) != 11 || !h.EndLine || h.Interrupted {
		t.Fatalf("whole file: %d operations, end_line %v, interrupted %v, err %v; want 11, true, false, nil", len(ops), h.EndLine, h.Interrupted, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	write := func(name string, ls []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"cut at a line boundary", write("cut.jsonl", lines[:6]), "cut short after line 6: no end line"},
		{"end line miscounts", write("miscount.jsonl", append(append([]string{}, lines[:6]...), `{"end_operations":11}`+"\n")), "the end line counts 11 operations, the file holds 5"},
		{"operation after the end line", write("after.jsonl", append(append([]string{}, lines...), lines[1])), "an operation after the end line"},
	} {
		_, _, err := Load(tt.path)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want ErrCorrupt with %q", tt.name, err, tt.want)
		}
	}
	other := strings.Replace(lines[0], `,"end_line":true`, "", 1)
	if other == lines[0] {
		t.Fatalf("header %q has no end_line", lines[0])
	}
	if _, ops, err := Load(write("other.jsonl", append([]string{other}, lines[1:6]...))); err != nil || len(ops) != 5 {
		t.Errorf("a history without end_line in its header: %d operations, err %v; want 5, nil", len(ops), err)
	}
}

// TestInterruptedInEndLine: a Writer marked interrupted says so in its end
// line, and Load reports it.
func TestInterruptedInEndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	w, err := Create(path, Header{Strategy: "token-lua", Scenario: "baseline", Seed: 1, TTLMs: 100, Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Operation{Client: 0, Kind: Acquire, Key: "k", Invoke: 1, Complete: 2, Result: Fail})
	w.MarkInterrupted()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), `{"end_operations":1,"interrupted":true}`+"\n") {
		t.Errorf("end line of an interrupted run: file ends %q", data[max(0, len(data)-60):])
	}
	h, ops, err := Load(path)
	if err != nil || len(ops) != 1 || !h.Interrupted {
		t.Errorf("Load: %d operations, interrupted %v, err %v; want 1, true, nil", len(ops), h.Interrupted, err)
	}
}

// TestClockFieldsRoundTrip: the cross-host fields survive the file: the
// header's clock, injected skew, clock error and shared keys, and the end
// line's clock and largest harness stall, which Load returns in the
// Header (ClockAfter, MaxStallNs); a history without them reads as before.
func TestClockFieldsRoundTrip(t *testing.T) {
	before := &ClockSync{Server: "redis 127.0.0.1:6379 TIME", OffsetNs: 1_796_000_000_000_000_000, HalfRTTNs: 9000}
	after := ClockSync{Server: "redis 127.0.0.1:6379 TIME", OffsetNs: 1_796_000_000_000_001_000, HalfRTTNs: 7000}
	for _, tt := range []struct {
		name  string
		h     Header
		after *ClockSync
		stall time.Duration
	}{
		{"none", Header{Strategy: "token-lua", Scenario: "baseline", TTLMs: 100}, nil, 0},
		{"all", Header{Strategy: "token-lua", Scenario: "gc-pause", TTLMs: 100, Clock: before, ClockSkewNs: int64(50 * time.Millisecond), SharedKeys: true}, &after, 88 * time.Millisecond},
		{"clock error", Header{Strategy: "token-lua", Scenario: "baseline", TTLMs: 100, ClockError: "cluster: 127.0.0.1:6379: TIME: NOPERM"}, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h.jsonl")
			w, err := Create(path, tt.h)
			if err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				w.SetClockAfter(*tt.after)
			}
			w.SetMaxStall(tt.stall)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			h, _, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if (h.Clock == nil) != (tt.h.Clock == nil) || h.Clock != nil && *h.Clock != *tt.h.Clock ||
				(h.ClockAfter == nil) != (tt.after == nil) || h.ClockAfter != nil && *h.ClockAfter != *tt.after ||
				h.ClockSkewNs != tt.h.ClockSkewNs || h.ClockError != tt.h.ClockError || h.SharedKeys != tt.h.SharedKeys || h.MaxStallNs != int64(tt.stall) {
				t.Errorf("loaded clock %+v after %+v skew %d error %q shared %v stall %d; wrote %+v after %+v stall %v",
					h.Clock, h.ClockAfter, h.ClockSkewNs, h.ClockError, h.SharedKeys, h.MaxStallNs, tt.h, tt.after, tt.stall)
			}
		})
	}
}
