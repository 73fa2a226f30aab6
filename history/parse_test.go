package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// decodeBoth decodes line with decodeOperation (the fast path, falling
// back to encoding/json) and with strictUnmarshal (encoding/json alone)
// and says how they differ ("" when they agree on the error and the
// operation).
func decodeBoth(line []byte) string {
	var fast, std Operation
	ef := decodeOperation(line, &fast)
	es := strictUnmarshal(line, &std)
	switch {
	case (ef == nil) != (es == nil):
		return fmt.Sprintf("fast error %v, encoding/json error %v", ef, es)
	case ef != nil && ef.Error() != es.Error():
		return fmt.Sprintf("fast error %q, encoding/json error %q", ef, es)
	case !reflect.DeepEqual(fast, std):
		return fmt.Sprintf("fast %+v, encoding/json %+v", fast, std)
	}
	return ""
}

// seedLines are operation lines of the test histories and edge cases
// where JSON decoders are known to differ.
func seedLines(t testing.TB) [][]byte {
	var lines [][]byte
	files, _ := filepath.Glob("../checker/testdata/*.jsonl")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range bytes.Split(b, []byte("\n")) {
			if i > 0 && len(bytes.TrimSpace(l)) > 0 && !bytes.HasPrefix(l, []byte(`{"end_operations"`)) {
				lines = append(lines, l)
			}
		}
	}
	base := `{"client":3,"stream":4,"kind":"acquire","key":"lb:k1","hold":7,"depth":1,"token":"c3-1:ab:7","invoke_ns":100,"complete_ns":200,"result":"ok"}`
	for _, s := range []string{
		base,
		strings.Replace(base, `"client":3`, `"client":3.0`, 1),
		strings.Replace(base, `"client":3`, `"client":3e0`, 1),
		strings.Replace(base, `"client":3`, `"client":-0`, 1),
		strings.Replace(base, `"client":3`, `"client":03`, 1),
		strings.Replace(base, `"client":3`, `"client":"3"`, 1),
		strings.Replace(base, `"client":3`, `"client":true`, 1),
		strings.Replace(base, `"client":3`, `"client":null`, 1),
		strings.Replace(base, `"client":3`, `"client":99999999999999999999`, 1),
		strings.Replace(base, `"client":3`, `"CLIENT":3`, 1),
		strings.Replace(base, `"client":3`, `"Client":5,"client":3`, 1),
		strings.Replace(base, `"client":3`, `"client":3,"client":4`, 1),
		strings.Replace(base, `"client":3`, `"clients":3`, 1),
		strings.Replace(base, `"client":3`, `"client":{}`, 1),
		strings.Replace(base, `"client":3`, `"client":[3]`, 1),
		strings.Replace(base, `"key":"lb:k1"`, `"key":null`, 1),
		strings.Replace(base, `"key":"lb:k1"`, `"key":1`, 1),
		strings.Replace(base, `"key":"lb:k1"`, `"key":"lb\u003ck1"`, 1),
		strings.Replace(base, `"key":"lb:k1"`, `"key":"lb\"k1"`, 1),
		strings.Replace(base, `"key":"lb:k1"`, "\"key\":\"lb\xffk1\"", 1),
		strings.Replace(base, `"key":"lb:k1"`, "\"key\":\"lb\tk1\"", 1),
		strings.Replace(base, `"key":"lb:k1"`, `"key":"lb:k1","note":"é"`, 1),
		strings.Replace(base, `"invoke_ns":100`, `"invoke_ns":1e2`, 1),
		strings.Replace(base, `"invoke_ns":100`, `"invoke_ns":100.5`, 1),
		strings.Replace(base, `"invoke_ns":100`, `"invoke_ns":9223372036854775808`, 1),
		strings.Replace(base, `"invoke_ns":100`, `"invoke_ns":-9223372036854775808`, 1),
		strings.Replace(base, `"invoke_ns":100`, `"invoke_ns" : 100 `, 1),
		strings.Replace(base, `"result":"ok"`, `"result":"ok",`, 1),
		base + `}`,
		base + ` {}`,
		base + `x`,
		base[:len(base)-1],
		`{}`, `[]`, `null`, `"x"`, `{"client":1}`, `{"landing":"landed"}`,
		strings.Replace(base, `{"client"`, `{ "client"`, 1),
	} {
		lines = append(lines, []byte(s))
	}
	return lines
}

// TestFastDecodeMatchesJSON: on the operation lines of the test
// histories, edge cases and thousands of seeded mutations of them,
// decodeOperation accepts what encoding/json accepts, with the same
// operation, and refuses the rest with encoding/json's error.
func TestFastDecodeMatchesJSON(t *testing.T) {
	lines := seedLines(t)
	r := rand.New(rand.NewPCG(1, 2))
	tokens := []string{`0`, `-1`, `1.5`, `1e3`, `null`, `true`, `""`, `"\u00e9"`, `{}`, `[]`, `,`, `:`, `"`, `}`, ` `, `\`, "\xff", `"client"`, `"Kind"`}
	for _, l := range lines {
		if d := decodeBoth(l); d != "" {
			t.Errorf("%s: %s", l, d)
		}
		for range 200 {
			m := bytes.Clone(l)
			switch r.IntN(3) {
			case 0: // flip a byte
				if len(m) > 0 {
					m[r.IntN(len(m))] = byte(r.IntN(128))
				}
			case 1: // insert a token
				i := r.IntN(len(m) + 1)
				m = append(m[:i:i], append([]byte(tokens[r.IntN(len(tokens))]), l[i:]...)...)
			case 2: // cut a piece out
				if len(m) > 2 {
					i := r.IntN(len(m) - 1)
					j := i + 1 + r.IntN(min(8, len(m)-i-1))
					m = append(m[:i:i], m[j:]...)
				}
			}
			if d := decodeBoth(m); d != "" {
				t.Errorf("%s: %s", m, d)
			}
		}
	}
}

// FuzzDecodeOperation: decodeOperation and encoding/json agree on any
// line (go test ./history -fuzz FuzzDecodeOperation).
func FuzzDecodeOperation(f *testing.F) {
	for _, l := range seedLines(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if d := decodeBoth(line); d != "" {
			t.Errorf("%q: %s", line, d)
		}
	})
}

// TestParseOnEveryCore: a history large enough to be parsed in parts
// (parallelFrom) reads back whole and in order, and its errors name the
// same line as a history parsed in one part.
func TestParseOnEveryCore(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	var b bytes.Buffer
	b.WriteString(`{"schema_version":1,"strategy":"s","scenario":"baseline","seed":1,"clients":2,"keys":1,"ttl_ms":100,"fencing":"off","end_line":true}` + "\n")
	n := 0
	for b.Len() < 3*parallelFrom {
		b.Write(appendOperation(nil, Operation{Client: n % 2, Stream: n % 2, Kind: Read, Key: "lb:k0", Invoke: int64(n), Complete: int64(n + 1), Result: OK, Value: int64(n)}))
		b.WriteByte('\n')
		if n%1000 == 0 {
			b.WriteString("\n") // blank lines leave gaps to close
		}
		n++
	}
	whole := bytes.Clone(b.Bytes())
	fmt.Fprintf(&b, "{\"end_operations\":%d}\n", n)
	_, ops, err := Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != n {
		t.Fatalf("%d operations, want %d", len(ops), n)
	}
	for i, op := range ops {
		if op.Value != int64(i) || op.Key != "lb:k0" || op.Kind != Read {
			t.Fatalf("operation %d: %+v", i, op)
		}
	}
	// An operation after the end line, and a bad line late in the file.
	lines := bytes.Split(whole, []byte("\n"))
	bad := bytes.Join(append(append([][]byte{}, lines[:len(lines)/2]...), append([][]byte{[]byte(`{"end_operations":1}`)}, lines[len(lines)/2:]...)...), []byte("\n"))
	if _, _, err := Parse(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d: an operation after the end line", len(lines)/2+2)) {
		t.Errorf("operation after the end line: %v", err)
	}
	lines[len(lines)-10] = []byte(`{"client":1,"kind":"bogus"}`)
	if _, _, err := Parse(bytes.NewReader(bytes.Join(lines, []byte("\n")))); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d: unknown kind", len(lines)-9)) {
		t.Errorf("bad line: %v", err)
	}
}
