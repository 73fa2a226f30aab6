package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrCorrupt is wrapped by every error Read returns for a malformed file; the
// message names the line.
var ErrCorrupt = errors.New("history: corrupt file")

// Writer appends operations to a JSON Lines history file. It is safe for
// concurrent use by every client of a run.
//
// Record does not write: it hands the operation to a bounded queue
// (QueueSize operations) that one background goroutine empties every 2 ms,
// encoding (see appendOperation: no reflection, no allocation per
// operation) and writing in batches of 64 KiB (the rest at Close), so a client never waits for the disk unless
// the queue is full (the disk cannot keep up), when Record blocks until
// there is room: operations are never dropped while the file is healthy.
// After the first write error the goroutine keeps draining the queue and
// drops what it takes, so clients never block on a broken file; Close
// returns that error.
type Writer struct {
	f   *os.File
	ops chan Operation
	// chunks carries Buffers' encoded operations (whole lines); free
	// returns the written chunks' memory to the Buffers.
	chunks chan []byte
	free   chan []byte
	stop   chan struct{} // closed by Close: write out what is queued and finish
	done   chan struct{} // closed when the background goroutine has finished
	n      atomic.Int64  // operations encoded, stored by the background goroutine

	// closed turns true at Close. Record reads it without a lock: a mutex
	// shared by every client cost each Record two contended atomic
	// operations.
	closed atomic.Bool
	// interrupted is set by MarkInterrupted and written in the end line.
	interrupted atomic.Bool
	// incomplete is set by MarkIncomplete and written in the end line.
	incomplete atomic.Pointer[string]
	// clockAfter is set by SetClockAfter and written in the end line.
	clockAfter atomic.Pointer[ClockSync]
	// maxStall is set by SetMaxStall and written in the end line (ns).
	maxStall atomic.Int64

	errMu sync.Mutex
	err   error // first write error (guarded by errMu)

	closeOnce sync.Once
	closeErr  error
}

// QueueSize is how many operations the Writer's queue holds before Record
// blocks. With a drain every drainEvery (2 ms) that is room for 4 million
// operations/s, 40× lockbench's fastest; a larger queue costs every run
// its zeroing at Create and its scanning at each garbage collection (the
// queue holds pointers): 65 536 operations (14 MB) cost ~15% of the
// client's CPU at one client.
const QueueSize = 1 << 13

// writeBatch is the size in bytes at which the Writer's goroutine writes
// its buffer even when more operations are queued.
const writeBatch = 1 << 16

// Create creates (truncates) the history file at path and writes h as line 1,
// with h.SchemaVersion set to SchemaVersion, then starts the Writer's
// background goroutine (stopped by Close). Errors come from the file system.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: create %s: %w", path, err)
	}
	h.SchemaVersion = SchemaVersion
	h.EndLine = true
	line, err := json.Marshal(h)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("history: write header: %w", err)
	}
	w := newWriter(f, QueueSize)
	go w.drain()
	return w, nil
}

// newWriter returns a Writer on f with a queue of queue operations; the
// caller starts its background goroutine (drain).
func newWriter(f *os.File, queue int) *Writer {
	return &Writer{f: f, ops: make(chan Operation, queue), chunks: make(chan []byte, chunkQueue),
		free: make(chan []byte, chunkQueue), stop: make(chan struct{}), done: make(chan struct{})}
}

// Record queues one operation for writing; see Writer for when it blocks.
// Records after Close are ignored; one that races with Close may be
// dropped.
func (w *Writer) Record(op Operation) {
	if w.closed.Load() {
		return
	}
	select {
	case w.ops <- op:
	default:
		// The queue is full: wait for room, or for the end of the
		// background goroutine (Close), when the operation is dropped.
		select {
		case w.ops <- op:
		case <-w.done:
		}
	}
}

// drainEvery is how often the Writer's goroutine wakes to take what the
// queue holds. It polls instead of blocking on the queue: a receiver
// blocked on a channel is woken by every send, which would cost each
// Record a goroutine wake-up (a futex call and a context switch, ~10 µs on a
// busy machine); polling costs one wake-up per period whatever the rate.
const drainEvery = 2 * time.Millisecond

// drain is the background goroutine: every drainEvery it encodes what is
// queued into a buffer, which it writes to the file each time it reaches
// writeBatch bytes (one write system call per 64 KiB, not one per wake-up:
// measured ~5 µs of CPU per command at one client when it wrote every
// wake-up), and once more when Close has closed the queue.
func (w *Writer) drain() {
	defer close(w.done)
	buf := make([]byte, 0, 2*writeBatch)
	var n int64 // operations encoded so far
	failed := false
	write := func() {
		if len(buf) == 0 {
			return
		}
		if !failed {
			if _, err := w.f.Write(buf); err != nil {
				failed = true
				w.setErr(fmt.Errorf("history: write operations up to %d: %w", n, err))
			}
		}
		buf = buf[:0]
	}
	// take encodes what is queued now and appends the Buffers' chunks,
	// writing every writeBatch bytes.
	take := func() {
		for {
			select {
			case op := <-w.ops:
				buf = append(appendOperation(buf, op), '\n')
				n++
			case c := <-w.chunks:
				buf = append(buf, c...)
				n += int64(bytes.Count(c, []byte{'\n'})) // one line per operation
				select {
				case w.free <- c[:0]:
				default:
				}
			default:
				w.n.Store(n)
				return
			}
			if len(buf) >= writeBatch {
				write()
			}
		}
	}
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	for {
		take()
		select {
		case <-tick.C:
		case <-w.stop:
			take()
			write()
			return
		}
	}
}

// chunkSize is the size in bytes at which a Buffer hands its encoded
// operations to the Writer; chunkQueue how many chunks the Writer's queue
// holds before a Buffer's hand-over blocks.
const (
	chunkSize  = 16 << 10
	chunkQueue = 256
)

// Buffer records the operations of one goroutine (one workload client):
// Record encodes the operation into the Buffer's own memory, in the
// caller's goroutine, and hands the Writer whole chunks of 16 KiB, so a
// client pays for neither a channel operation nor a copy of the operation
// per Record, and the encoding runs on the clients' cores, not all on the
// Writer's goroutine. Lines of different Buffers interleave in the file
// by chunk, not by time: the file's order is not the order of events (no
// reader needs it; every checker orders by time). One Buffer's lines keep
// its order. A Buffer is not safe for concurrent use; Flush it before the
// Writer's Close, or its operations are lost.
type Buffer struct {
	w *Writer
	b []byte
}

// NewBuffer returns an empty Buffer that hands its operations to w.
func (w *Writer) NewBuffer() *Buffer { return &Buffer{w: w} }

// Record encodes op into the Buffer, handing the Writer a chunk once the
// Buffer holds chunkSize bytes. Records after the Writer's Close are
// ignored.
func (b *Buffer) Record(op Operation) {
	if b.b == nil {
		select {
		case b.b = <-b.w.free:
		default:
			b.b = make([]byte, 0, chunkSize+1024)
		}
	}
	b.b = append(appendOperation(b.b, op), '\n')
	if len(b.b) >= chunkSize {
		b.Flush()
	}
}

// Flush hands what the Buffer holds to the Writer. It blocks while the
// Writer's chunk queue is full, and drops the operations once the Writer
// is closed.
func (b *Buffer) Flush() {
	if len(b.b) == 0 || b.w.closed.Load() {
		return
	}
	select {
	case b.w.chunks <- b.b:
	case <-b.w.done:
	}
	b.b = nil
}

func (w *Writer) setErr(err error) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// Len returns how many operations the Writer has taken from its queue so
// far; after Close, every operation recorded before Close.
func (w *Writer) Len() int { return int(w.n.Load()) }

// MarkInterrupted records that the run was interrupted (Ctrl-C or SIGTERM) before its
// planned end: Close writes it in the end line and Parse reports it in
// Header.Interrupted. Call it before Close.
func (w *Writer) MarkInterrupted() { w.interrupted.Store(true) }

// MarkIncomplete records that the run stopped before its planned end
// because of a failure (e.g. an exec adapter that broke the protocol),
// with why in one line: Close writes it in the end line and Parse reports
// it in Header.Incomplete. Call it before Close.
func (w *Writer) MarkIncomplete(why string) { w.incomplete.Store(&why) }

// SetClockAfter records the clock measurement taken after the run, written
// in the end line; Parse returns it as Header.ClockAfter. Call it before
// Close.
func (w *Writer) SetClockAfter(c ClockSync) { w.clockAfter.Store(&c) }

// SetMaxStall records the largest delay the harness itself added inside a
// hold during the run (workload.Stats.MaxOverrun), written in the end
// line; Parse returns it as Header.MaxStallNs. Call it before Close.
func (w *Writer) SetMaxStall(d time.Duration) { w.maxStall.Store(int64(d)) }

// Close waits until every queued operation is written, then closes the
// file. It returns the first write error, if any. Calling it again returns
// the same error.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		close(w.stop)
		<-w.done
		w.errMu.Lock()
		failed := w.err != nil
		w.errMu.Unlock()
		if !failed {
			// The end line tells a reader the file is whole.
			e := endLine{EndOperations: w.n.Load(), Interrupted: w.interrupted.Load()}
			if why := w.incomplete.Load(); why != nil {
				e.Incomplete = *why
			}
			e.Clock = w.clockAfter.Load()
			e.MaxStallNs = w.maxStall.Load()
			end, _ := json.Marshal(e)
			if _, err := w.f.Write(append(end, '\n')); err != nil {
				w.setErr(fmt.Errorf("history: write the end line: %w", err))
			}
		}
		if err := w.f.Close(); err != nil {
			w.setErr(fmt.Errorf("history: close: %w", err))
		}
		w.errMu.Lock()
		w.closeErr = w.err
		w.errMu.Unlock()
	})
	return w.closeErr
}

// Load reads a history file written by Writer (or by any tool that follows
// the format in docs/history-format.md). Errors wrap ErrCorrupt and name the line.
func Load(path string) (Header, []Operation, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Header{}, nil, fmt.Errorf("history: %s is a folder, not a history file (histories are in <results>/histories/*.jsonl)", path)
	}
	var data []byte
	if st, err := f.Stat(); err == nil && st.Size() > 0 && st.Size() < 1<<40 {
		data = make([]byte, 0, st.Size()+1) // +1: ReadAll sees EOF without growing
	}
	data, err = readAll(f, data)
	return parseBytes(data, err)
}

// readAll appends what r holds to b (as io.ReadAll, into b's room first).
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return b, err
		}
	}
}

// maxLine is the longest line Parse reads (16 MiB); a history's lines are
// a few hundred bytes.
const maxLine = 1 << 24

// Parse reads a history from r; see Load. It reads r to its end first
// (see parseBytes).
func Parse(r io.Reader) (Header, []Operation, error) {
	data, err := io.ReadAll(r)
	return parseBytes(data, err)
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
	case Acquire, Release, Extend, Lost, Read, Write, Crash, Probe, Nemesis, Check:
	case Observe:
	default:
		return fmt.Errorf("unknown kind %q", op.Kind)
	}
	if op.Reason != "" && !ValidReason(op.Reason) {
		return fmt.Errorf("unknown reason %q (want one of %s)", op.Reason, strings.Join(Reasons, ", "))
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
