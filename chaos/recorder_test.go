package chaos

import (
	"sync"
	"time"

	"github.com/lockbench/lockbench/history"
)

// recorder keeps the operations a nemesis records.
type recorder struct {
	mu   sync.Mutex
	list []history.Operation
}

func (r *recorder) Record(op history.Operation) {
	r.mu.Lock()
	r.list = append(r.list, op)
	r.mu.Unlock()
}

// windows returns the nemesis operations that last at least 1 ms (fault
// windows, not markers).
func (r *recorder) windows() []history.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []history.Operation
	for _, op := range r.list {
		if op.Kind == history.Nemesis && op.Complete-op.Invoke >= int64(time.Millisecond) {
			out = append(out, op)
		}
	}
	return out
}

// ops returns a copy of every operation recorded.
func (r *recorder) ops() []history.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]history.Operation(nil), r.list...)
}

// notes returns the notes of every operation recorded.
func (r *recorder) notes() []string {
	var s []string
	for _, op := range r.ops() {
		s = append(s, op.Note)
	}
	return s
}
