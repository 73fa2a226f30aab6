package strategies

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Library module paths and the versions go.mod requires. A test
// (TestLibraryVersionsMatchGoMod) fails when go.mod moves and these do not.
const (
	redsyncModule    = "github.com/go-redsync/redsync/v4"
	redsyncVersion   = "v4.18.1"
	redislockModule  = "github.com/bsm/redislock"
	redislockVersion = "v0.9.4"
)

// moduleVersion returns "path version" for a library module: the version
// linked into this binary (runtime/debug.ReadBuildInfo), or, where the
// build carries no dependency list (test binaries), the version go.mod
// requires (fallback).
func moduleVersion(path, fallback string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil && d.Replace.Version != "" {
					return path + " " + d.Replace.Version
				}
				return path + " " + d.Version
			}
		}
	}
	return path + " " + fallback
}

// Setting is one library setting of a library adapter, settable with the
// `lockbench run` flag of the same name and recorded in results.json.
type Setting struct {
	// Name is the flag name without dashes, e.g. "redsync-tries".
	Name string
	// Default is the value used when the flag is not given, as text.
	Default string
	// Usage is the one-line flag help: what it sets and the valid values.
	Usage string
	// Bool marks a setting that may be given without a value (= "true").
	Bool bool
	// Strategies are the strategies it applies to.
	Strategies []string
}

// Tunable is a strategy with library settings (a library adapter).
type Tunable interface {
	impl.Strategy
	// Settings returns the effective value of each of its settings, by
	// Setting.Name, defaults included (results.json records them).
	Settings() map[string]string
	// tune returns a copy with the given settings applied; ttl is the
	// run's lock TTL (some settings must stay below it).
	tune(settings map[string]string, ttl time.Duration) (impl.Strategy, error)
}

// Settings lists every library setting of every adapter, sorted by name.
func Settings() []Setting {
	var out []Setting
	out = append(out, redsyncSettings()...)
	out = append(out, redislockSettings()...)
	out = append(out, zkSettings()...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tune applies library settings (by Setting.Name, values as text) to st for
// a run with lock TTL ttl. An empty map returns st unchanged. The error
// names the flag and says what is wrong: a setting that does not apply to
// st (st is not a library adapter, or another library's), or an impossible
// value (the valid range is named).
func Tune(st impl.Strategy, settings map[string]string, ttl time.Duration) (impl.Strategy, error) {
	if len(settings) == 0 {
		return st, nil
	}
	known := map[string]Setting{}
	for _, s := range Settings() {
		known[s.Name] = s
	}
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s, ok := known[n]
		switch {
		case !ok:
			return nil, fmt.Errorf("--%s: unknown library setting", n)
		case !slices.Contains(s.Strategies, st.Name()):
			return nil, fmt.Errorf("--%s applies only to %s, not to strategy %s (only library adapters take library settings)",
				n, strings.Join(s.Strategies, ", "), st.Name())
		}
	}
	t, ok := st.(Tunable)
	if !ok {
		return nil, fmt.Errorf("strategy %s takes no library settings", st.Name())
	}
	return t.tune(settings, ttl)
}

// libraryContext returns ctx with a deadline that closes Done: a context of
// its own at ctx's deadline (context.WithDeadline), or ctx itself when it has
// no deadline. The workload's call context bounds socket I/O by its
// deadline but closes Done only on Ctrl-C (workload.callContext), and a
// library may wait on Done between its attempts (redsync's LockContext
// does). Call the returned cancel when the call returns.
func libraryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, d)
	}
	return ctx, func() {}
}
