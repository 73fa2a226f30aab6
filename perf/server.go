package perf

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/commandstats"
)

// snapshot reads INFO commandstats and INFO cpu from the server
// (commandstats.Read: the lock commands, harness commands left out).
func snapshot(ctx context.Context, c *redis.Client) (commandstats.NodeCalls, error) {
	s, err := commandstats.Read(ctx, c)
	if err != nil {
		return s, fmt.Errorf("perf: %w", err)
	}
	return s, nil
}

// serverDelta is the server's work between two snapshots: commands served
// and CPU busy in cores (CPU seconds per wall second).
func serverDelta(a, b commandstats.NodeCalls) (commands int64, cores float64) {
	wall := b.At.Sub(a.At).Seconds()
	if wall <= 0 {
		return b.Calls - a.Calls, 0
	}
	return b.Calls - a.Calls, (b.CPUSeconds - a.CPUSeconds) / wall
}

// selfCPU returns this process's user+system CPU time so far (getrusage).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineBusy returns the CPU time every process of the machine has used
// so far (all of /proc/stat's first line but idle and iowait), or 0 when
// /proc/stat cannot be read.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest times are already in user
			continue
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / userHZ
}

// userHZ is the unit of /proc/stat (USER_HZ, 100 on Linux).
const userHZ = 100
