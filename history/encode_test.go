package history

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// randString draws strings that exercise every escaping rule: ASCII,
// control bytes, quotes, HTML characters, multi-byte runes, U+2028/9 and
// invalid UTF-8.
func randString(r *rand.Rand) string {
	pieces := []string{"", "a", "lb:k7", `"`, `\`, "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "锁", "\u2028", "\u2029", "\xff", "\xe2\x80", "🙂", "c3-1:ab12cd34:17", " "}
	var b []byte
	for n := r.IntN(6); n > 0; n-- {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

func randInt(r *rand.Rand) int64 {
	switch r.IntN(5) {
	case 0:
		return 0
	case 1:
		return -r.Int64N(1000)
	case 2:
		return math.MaxInt64
	case 3:
		return math.MinInt64
	}
	return r.Int64N(1 << 40)
}

func TestAppendOperationMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		op := Operation{
			Client: int(randInt(r) % 100000), Stream: int(randInt(r) % 100000), Kind: Kind(randString(r)),
			Key: randString(r), Node: randString(r), Hold: randInt(r), Depth: int(randInt(r) % 64), Count: int(randInt(r) % 64),
			Token: randString(r), Fence: randInt(r), Invoke: randInt(r), Complete: randInt(r), Result: Result(randString(r)),
			Value: randInt(r), Prev: randInt(r), ValidUntil: randInt(r), Error: randString(r), Reason: randString(r), Note: randString(r), Landing: Landing(randString(r)),
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(op); err != nil {
			t.Fatal(err)
		}
		got := append(appendOperation(nil, op), '\n')
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("op %+v:\n got %s\nwant %s", op, got, want.Bytes())
		}
	}
}

func TestAppendOperationDoesNotAllocate(t *testing.T) {
	op := Operation{Client: 3, Stream: 4, Kind: Acquire, Key: "lb:k1", Hold: 9, Token: "c3-1:ab12cd34:17", Invoke: 123456789, Complete: 123999999, Result: OK, ValidUntil: 223456789}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = appendOperation(buf[:0], op) }); n != 0 {
		t.Errorf("appendOperation allocates %v times per operation, want 0", n)
	}
}

func TestWriterRecordDoesNotAllocate(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "h.jsonl"), Header{Strategy: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	op := Operation{Client: 3, Stream: 4, Kind: Acquire, Key: "lb:k1", Hold: 9, Token: "c3-1:ab12cd34:17", Invoke: 1, Complete: 2, Result: OK}
	if n := testing.AllocsPerRun(1000, func() { w.Record(op) }); n != 0 {
		t.Errorf("Record allocates %v times per operation, want 0", n)
	}
}

func TestWriterRecordAfterCloseIsIgnored(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "h.jsonl"), Header{Strategy: "s"})
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Operation{Kind: Acquire, Result: OK})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Record(Operation{Kind: Release, Result: OK})
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if w.Len() != 1 {
		t.Errorf("Len %d after a Record past Close, want 1", w.Len())
	}
}

// BenchmarkWriterRecord measures Record from parallel clients, including
// the background encoding and writing (Close is inside the timing).
func BenchmarkWriterRecord(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "h.jsonl"), Header{Strategy: "s"})
	if err != nil {
		b.Fatal(err)
	}
	op := Operation{Client: 3, Stream: 4, Kind: Acquire, Key: "lb:k1", Hold: 9, Token: "c3-1:ab12cd34:17", Invoke: 123456789, Complete: 123999999, Result: OK, ValidUntil: 223456789}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Record(op)
		}
	})
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func TestWriterKeepsFirstWriteErrorAndNeverBlocks(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full on this machine: %v", err)
	}
	w := newWriter(f, 4)
	go w.drain()
	// Far more operations than the queue holds: Record must not block
	// forever once the file is broken.
	for i := 0; i < 100; i++ {
		w.Record(Operation{Kind: Acquire, Result: OK, Invoke: int64(i), Complete: int64(i)})
	}
	err = w.Close()
	if err == nil || !strings.Contains(err.Error(), "history: write operations") {
		t.Fatalf("Close = %v, want the write error", err)
	}
}
