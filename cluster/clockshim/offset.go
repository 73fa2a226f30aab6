package clockshim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// OffsetEnv names the environment variable that tells the clock shim
// (Build) which file holds its process's clock offset: the
// offset in nanoseconds as decimal text, written by WriteOffset.
const OffsetEnv = "LOCKBENCH_CLOCK_OFFSET_FILE"

// WriteOffset replaces the clock offset file at path with d (a
// process preloaded with the clock shim and OffsetEnv=path reads its
// realtime clocks as real time + d within a millisecond of its next read).
// It writes a temporary file beside it and renames it, so the shim reads
// either the old or the new value, never a torn one. Errors are the file
// system's, wrapped.
func WriteOffset(path string, d time.Duration) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(int64(d), 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("cluster: write clock offset: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cluster: write clock offset: %w", err)
	}
	return nil
}

// ReadOffset reads the clock offset file at path back: the offset
// the shim will apply. Errors: the file cannot be read, or does not hold
// an offset in nanoseconds.
func ReadOffset(path string) (time.Duration, error) {
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

// Seen returns the offset the process preloaded with the shim and
// the offset file at path last applied to a read of its wall clock after
// the offset changed (the shim writes it to path+".seen"; see
// c/clockshim.c): evidence that a step reached the process's own view of
// the time. ok is false when the process has read no changed offset yet
// (it reads no realtime clock, or reads it without libc). Errors: the
// ".seen" file exists but cannot be read or parsed.
func Seen(path string) (d time.Duration, ok bool, err error) {
	d, err = ReadOffset(path + ".seen")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return d, true, nil
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
