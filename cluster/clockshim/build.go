// Package clockshim is the clock-offset LD_PRELOAD library (c/clockshim.c)
// that steps a process's wall clock without touching the machine's: its
// build (Build, Cached, Source), the offset file it reads (OffsetEnv,
// WriteOffset, ReadOffset, Seen), and the checks that it reaches a process
// (CheckPreloaded, Reach). The process backend of cluster preloads it into
// redis-server (Node.SetClockOffset); exec: strategies preload it into an
// adapter.
package clockshim

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lockbench/lockbench/internal/errs"
)

// clockShimSource is the C source of the clock-offset LD_PRELOAD library;
// see c/clockshim.c for how it works and why it exists.
//
//go:embed c/clockshim.c
var clockShimSource []byte

// Source returns the C source Build compiles, e.g. for a
// Makefile that builds the shim without Go.
func Source() []byte { return bytes.Clone(clockShimSource) }

// Build compiles the embedded clock shim with gcc
// (gcc -shared -fPIC -O2 -o PATH -x c - -ldl) into dir, unless a build of
// the same source is already there, and returns the library's absolute
// path, for cluster.Options.ClockShim. The file name carries a hash of the source,
// so a changed source is rebuilt; concurrent builds are safe (each writes a
// temporary file and renames it). Errors caused by the machine (no gcc, a
// failing compile) wrap errs.ErrEnvironment; the hint is "apt-get install gcc".
func Build(ctx context.Context, dir string) (string, error) {
	sum := sha256.Sum256(clockShimSource)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cluster: build clock shim: %w", err)
	}
	out, err := filepath.Abs(filepath.Join(dir, "lockbench-clockshim-"+hex.EncodeToString(sum[:6])+".so"))
	if err != nil {
		return "", fmt.Errorf("cluster: build clock shim: %w", err)
	}
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return "", fmt.Errorf("%w: cluster: build clock shim: gcc not found on PATH; install it: apt-get install gcc", errs.ErrEnvironment)
	}
	tmp, err := os.CreateTemp(dir, ".clockshim-*.so")
	if err != nil {
		return "", fmt.Errorf("cluster: build clock shim: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, gcc, "-shared", "-fPIC", "-O2", "-o", tmp.Name(), "-x", "c", "-", "-ldl")
	cmd.Stdin = bytes.NewReader(clockShimSource)
	if msg, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("cluster: build clock shim: %w", ctx.Err())
		}
		return "", fmt.Errorf("%w: cluster: build clock shim: gcc: %v: %s (install it: apt-get install gcc)", errs.ErrEnvironment, err, bytes.TrimSpace(msg))
	}
	if err := os.Rename(tmp.Name(), out); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cluster: build clock shim: %w", err)
	}
	return out, nil
}

// Cached builds (once per machine, cached in the user cache folder) the
// clock-offset LD_PRELOAD library the clock-jump scenarios need and returns
// its path (Build). Errors wrap errs.ErrEnvironment (e.g. gcc missing).
func Cached(ctx context.Context) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return Build(ctx, filepath.Join(dir, "lockbench"))
}
