package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrCorrupt is wrapped by every error Read returns for a malformed file; the
// message names the line.
var ErrCorrupt = errors.New("history: corrupt file")

// Writer appends operations to a JSON Lines history file. It is safe for
// concurrent use by every client of a run.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	n   int
	err error
}

// Create creates (truncates) the history file at path and writes h as line 1,
// with h.SchemaVersion set to SchemaVersion.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: create %s: %w", path, err)
	}
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 1<<16)}
	w.enc = json.NewEncoder(w.w)
	h.SchemaVersion = SchemaVersion
	if err := w.enc.Encode(h); err != nil {
		f.Close()
		return nil, fmt.Errorf("history: write header: %w", err)
	}
	return w, nil
}

// Record appends one operation. The first write error is kept and returned
// by Close; later records are dropped after an error.
func (w *Writer) Record(op Operation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if err := w.enc.Encode(op); err != nil {
		w.err = fmt.Errorf("history: write operation %d: %w", w.n, err)
	}
	w.n++
}

// Len returns how many operations were recorded.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close flushes and closes the file. It returns the first write error, if any.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = fmt.Errorf("history: flush: %w", err)
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("history: close: %w", err)
	}
	return w.err
}

// Load reads a history file written by Writer (or by any tool that follows
// the format in the README). Errors wrap ErrCorrupt and name the line.
func Load(path string) (Header, []Operation, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Header{}, nil, fmt.Errorf("history: %s is a folder, not a history file (histories are in <results>/histories/*.jsonl)", path)
	}
	return Parse(f)
}

// Parse reads a history from r; see Load.
func Parse(r io.Reader) (Header, []Operation, error) {
	var h Header
	var ops []Operation
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line == 1 {
			if bytes.Contains(b, []byte(`"runs"`)) || string(b) == "{" {
				return h, nil, fmt.Errorf("%w: line 1 is not a history header (a history has one JSON object per line); if this is a results.json, use lockbench report DIR", ErrCorrupt)
			}
			if err := strictUnmarshal(b, &h); err != nil {
				return h, nil, fmt.Errorf("%w: line 1 (header): %v", ErrCorrupt, err)
			}
			if h.SchemaVersion != SchemaVersion {
				return h, nil, fmt.Errorf("%w: line 1: schema_version %d, this lockbench reads %d", ErrCorrupt, h.SchemaVersion, SchemaVersion)
			}
			if h.TTLMs < 0 || h.Clients < 0 || h.Keys < 0 {
				return h, nil, fmt.Errorf("%w: line 1: negative ttl_ms, clients or keys in the header", ErrCorrupt)
			}
			continue
		}
		var op Operation
		if err := strictUnmarshal(b, &op); err != nil {
			return h, nil, fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
		}
		if err := op.validate(); err != nil {
			return h, nil, fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return h, nil, fmt.Errorf("%w: after line %d: %v", ErrCorrupt, line, err)
	}
	if line == 0 {
		return h, nil, fmt.Errorf("%w: empty file (line 1 must be the header)", ErrCorrupt)
	}
	return h, ops, nil
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func (op Operation) validate() error {
	switch op.Kind {
	case Acquire, Release, Extend, Lost, Read, Write, Crash, Probe, Nemesis:
	default:
		return fmt.Errorf("unknown kind %q", op.Kind)
	}
	switch op.Result {
	case OK, Fail, Info:
	default:
		return fmt.Errorf("unknown result %q (want ok, fail or info)", op.Result)
	}
	if op.Complete < op.Invoke {
		return fmt.Errorf("complete_ns %d is before invoke_ns %d", op.Complete, op.Invoke)
	}
	return nil
}
