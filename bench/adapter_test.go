package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/workload"
)

// TestBrokenAdapterKeepsHistory: an adapter that breaks the protocol in
// the middle of a run stops it with a one-line error wrapping
// impl.ErrFatal; the history recorded so far is kept, its end line marked
// incomplete with that error, and the adapters' log is beside it.
func TestBrokenAdapterKeepsHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "adapter.sh")
	// It grants the first acquire, then answers the next request with a
	// line that is not JSON.
	err := os.WriteFile(script, []byte(`#!/bin/sh
echo '{"type":"hello","protocol":1,"name":"broken","claims":{"atomic_acquire":true,"token_release":true,"renewal":false,"reentrant":false,"quorum":false,"fencing":false,"validity":false},"nodes":1}'
read -r line
echo '{"type":"init_ok","in_reply_to":1}'
read -r line
echo '{"type":"ok","in_reply_to":2,"token":"t-'$$'"}'
read -r line
echo "Traceback (most recent call last):"
read -r line
`), 0o755)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := adapterclient.ExecPrefix + script
	_, err = Run(ctx, Spec{Strategy: name, Scenario: "baseline", Seed: 1, OutDir: out,
		Workload: workload.Config{Clients: 2, TTL: 200 * time.Millisecond, Duration: 2 * time.Second}})
	switch {
	case err == nil:
		t.Fatal("no error")
	case !errors.Is(err, impl.ErrFatal) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), `wrote a line that is not JSON`) || !strings.Contains(err.Error(), "marked incomplete"):
		t.Fatalf("error %q: want one line wrapping impl.ErrFatal that names the line and says the history is marked incomplete", err)
	}
	hist := filepath.Join(out, historyName(name, "baseline", 1))
	h, ops, err := history.Load(hist)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Incomplete, "wrote a line that is not JSON") {
		t.Errorf("history end line incomplete = %q, want the adapter's error", h.Incomplete)
	}
	var ok, info int
	for _, op := range ops {
		if op.Kind == history.Acquire && op.Result == history.OK {
			ok++
		}
		if op.Kind == history.Acquire || op.Kind == history.Release {
			if op.Result == history.Info {
				info++
			}
		}
	}
	if ok == 0 || info == 0 {
		t.Errorf("history holds %d granted acquires and %d unknown calls, want both (the grant before the break, the call it broke)", ok, info)
	}
	if _, err := os.Stat(adapterLogName(hist)); err != nil {
		t.Errorf("adapter log: %v", err)
	}
}
