// Package resource is the protected resource a workload's critical
// sections read and write: one counter per key, kept in the harness
// process, with an optional fencing-token check (Fencing). The resource
// check (checker) judges a run by what it accepted.
package resource

import (
	"fmt"
	"sync"
)

// Fencing is the protected resource's fencing mode.
type Fencing string

// Fencing modes.
const (
	// FencingOff: the resource accepts every operation.
	FencingOff Fencing = "off"
	// FencingWrites: a write whose fencing token is below the highest seen is rejected.
	FencingWrites Fencing = "writes"
	// FencingAll: reads are fencing-checked too (and raise the highest token),
	// so a stale holder cannot even read once a newer holder has touched the resource.
	FencingAll Fencing = "all"
)

// ParseFencing parses "off", "writes" or "all".
func ParseFencing(s string) (Fencing, error) {
	switch f := Fencing(s); f {
	case FencingOff, FencingWrites, FencingAll:
		return f, nil
	}
	return "", fmt.Errorf("unknown fencing mode %q (valid: off, writes, all)", s)
}

// Resource is the protected resource: one integer counter per key, kept in
// the harness process and linearizable by construction (one mutex). With
// fencing on it remembers the highest fencing token seen per key and rejects
// operations that carry a lower one (Kleppmann 2016, "How to do distributed
// locking"). It is safe for concurrent use.
type Resource struct {
	mode    Fencing
	mu      sync.Mutex
	value   map[string]int64
	highest map[string]int64
}

// New returns a resource with every counter at 0.
func New(mode Fencing) *Resource {
	if mode == "" {
		mode = FencingOff
	}
	return &Resource{mode: mode, value: map[string]int64{}, highest: map[string]int64{}}
}

// Read returns key's value. With FencingAll a read carrying a token below
// the highest seen is rejected (ok=false) and a higher token raises the
// highest; otherwise every read is accepted.
func (r *Resource) Read(key string, fence int64) (value int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == FencingAll {
		if fence < r.highest[key] {
			return 0, false
		}
		r.highest[key] = fence
	}
	return r.value[key], true
}

// Write sets key's value to next. With fencing on (writes or all) a write
// whose token is below the highest seen is rejected (ok=false, nothing
// changes); an accepted write raises the highest token.
func (r *Resource) Write(key string, next, fence int64) (ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode != FencingOff {
		if fence < r.highest[key] {
			return false
		}
		r.highest[key] = fence
	}
	r.value[key] = next
	return true
}

// Value returns key's current value (for tests and reports).
func (r *Resource) Value(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.value[key]
}
