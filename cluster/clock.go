package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClockOffsetEnv names the environment variable that tells the clock shim
// (BuildClockShim) which file holds its process's clock offset: the
// offset in nanoseconds as decimal text, written by WriteClockOffset.
const ClockOffsetEnv = "LOCKBENCH_CLOCK_OFFSET_FILE"

// clockEnv is ClockOffsetEnv, as the node code names it.
const clockEnv = ClockOffsetEnv

// offsetFile is the path of the node's clock offset file: the offset in
// nanoseconds as decimal text.
func (n *Node) offsetFile() string { return filepath.Join(n.dir, "clock-offset") }

// writeOffset replaces the node's offset file (WriteClockOffset).
func (n *Node) writeOffset(d time.Duration) error {
	if err := WriteClockOffset(n.offsetFile(), d); err != nil {
		return fmt.Errorf("cluster: write clock offset of %s: %w", n.name, err)
	}
	return nil
}

// WriteClockOffset replaces the clock offset file at path with d (a
// process preloaded with the clock shim and ClockOffsetEnv=path reads its
// realtime clocks as real time + d within a millisecond of its next read).
// It writes a temporary file beside it and renames it, so the shim reads
// either the old or the new value, never a torn one. Errors are the file
// system's, wrapped.
func WriteClockOffset(path string, d time.Duration) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(int64(d), 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("cluster: write clock offset: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cluster: write clock offset: %w", err)
	}
	return nil
}

// ReadClockOffset reads the clock offset file at path back: the offset
// the shim will apply. Errors: the file cannot be read, or does not hold
// an offset in nanoseconds.
func ReadClockOffset(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cluster: read clock offset: %w", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cluster: read clock offset %s: %w", path, err)
	}
	return time.Duration(v), nil
}

// ClockSeen returns the offset the process preloaded with the shim and
// the offset file at path last applied to a read of its wall clock after
// the offset changed (the shim writes it to path+".seen"; see
// clockshim.c): evidence that a step reached the process's own view of
// the time. ok is false when the process has read no changed offset yet
// (it reads no realtime clock, or reads it without libc). Errors: the
// ".seen" file exists but cannot be read or parsed.
func ClockSeen(path string) (d time.Duration, ok bool, err error) {
	d, err = ReadClockOffset(path + ".seen")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return d, true, nil
}

// SetClockOffset sets the node's wall clock to real time + d (d may be
// negative) from now on: the shim re-reads the offset at most every
// millisecond, and SetClockOffset returns 2 ms after writing it. Only the
// realtime clocks move (clock_gettime CLOCK_REALTIME and
// CLOCK_REALTIME_COARSE, gettimeofday, time); CLOCK_MONOTONIC is untouched.
// Redis 7 expires keys by the wall clock, so a forward jump past a key's
// TTL removes it at once. The offset is absolute, not cumulative, and
// survives Restart. It returns an error if the cluster was started without
// Options.ClockShim or the node is a Sentinel, and one wrapping
// ErrUnsupported on backends without the shim (docker, external).
func (n *Node) SetClockOffset(d time.Duration) error { return n.c.be.setClockOffset(n, d) }

// setShimOffset is SetClockOffset with the shim's offset file.
func (n *Node) setShimOffset(d time.Duration) error {
	if n.sentinel {
		return fmt.Errorf("cluster: set clock offset of %s: sentinels run without the clock shim", n.name)
	}
	if n.c.opts.ClockShim == "" {
		return fmt.Errorf("cluster: set clock offset of %s: cluster started without Options.ClockShim", n.name)
	}
	n.op.Lock()
	defer n.op.Unlock()
	if err := n.writeOffset(d); err != nil {
		return err
	}
	time.Sleep(2 * time.Millisecond)
	n.c.opts.Logf("cluster: clock offset of %s set to %v", n.name, d)
	return nil
}

// checkPreloaded verifies that the library at path is mapped into pid:
// ld.so only warns and goes on when LD_PRELOAD cannot be loaded.
func checkPreloaded(pid int, path string) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return fmt.Errorf("read maps: %w", err)
	}
	if !strings.Contains(string(b), path) {
		return fmt.Errorf("clock shim %s was not loaded into the server (LD_PRELOAD failed)", path)
	}
	return nil
}

// CheckPreloaded returns nil when the library at path (the clock shim) is
// mapped into process pid, read from /proc/PID/maps: ld.so only warns and
// goes on when LD_PRELOAD cannot be loaded, and a statically linked
// program never loads it. The error names the process and the library.
func CheckPreloaded(pid int, path string) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return fmt.Errorf("cluster: process %d: read maps: %w", pid, err)
	}
	if !strings.Contains(string(b), path) {
		return fmt.Errorf("cluster: clock shim %s is not mapped into process %d (LD_PRELOAD did not load it: a statically linked program?)", path, pid)
	}
	return nil
}
