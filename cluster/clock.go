package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/cluster/clockshim"
)

// clockEnv is clockshim.OffsetEnv, as the node code names it.
const clockEnv = clockshim.OffsetEnv

// offsetFile is the path of the node's clock offset file: the offset in
// nanoseconds as decimal text.
func (n *Node) offsetFile() string { return filepath.Join(n.dir, "clock-offset") }

// writeOffset replaces the node's offset file (clockshim.WriteOffset).
func (n *Node) writeOffset(d time.Duration) error {
	if err := clockshim.WriteOffset(n.offsetFile(), d); err != nil {
		return fmt.Errorf("cluster: write clock offset of %s: %w", n.name, err)
	}
	return nil
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
