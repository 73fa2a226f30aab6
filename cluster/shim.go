package cluster

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
)

// clockShimSource is the C source of the clock-offset LD_PRELOAD library;
// see clockshim/clockshim.c for how it works and why it exists.
//
//go:embed clockshim/clockshim.c
var clockShimSource []byte

// ClockShimSource returns the C source BuildClockShim compiles, e.g. for a
// Makefile that builds the shim without Go.
func ClockShimSource() []byte { return bytes.Clone(clockShimSource) }

// BuildClockShim compiles the embedded clock shim with gcc
// (gcc -shared -fPIC -O2 -o PATH -x c - -ldl) into dir, unless a build of
// the same source is already there, and returns the library's absolute
// path, for Options.ClockShim. The file name carries a hash of the source,
// so a changed source is rebuilt; concurrent builds are safe (each writes a
// temporary file and renames it). Errors caused by the machine (no gcc, a
// failing compile) wrap ErrEnvironment; the hint is "apt-get install gcc".
func BuildClockShim(ctx context.Context, dir string) (string, error) {
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
		return "", fmt.Errorf("%w: cluster: build clock shim: gcc not found on PATH; install it: apt-get install gcc", ErrEnvironment)
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
		return "", fmt.Errorf("%w: cluster: build clock shim: gcc: %v: %s (install it: apt-get install gcc)", ErrEnvironment, err, bytes.TrimSpace(msg))
	}
	if err := os.Rename(tmp.Name(), out); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cluster: build clock shim: %w", err)
	}
	return out, nil
}
