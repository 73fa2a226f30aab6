package perf

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// serverSnap is what INFO commandstats and INFO cpu say at one instant.
type serverSnap struct {
	at time.Time
	// commands counts the calls of data commands (every cmdstat_* except
	// the harness's own INFO, connection set-up and admin commands).
	commands int64
	// cpuS is used_cpu_sys + used_cpu_user, in seconds of CPU time.
	cpuS float64
}

// adminCommand reports whether a cmdstat_ name is a command that is not
// lock traffic: the harness's INFO and FLUSHALL, the handshakes go-redis and
// redis-benchmark make on connect (HELLO, CLIENT SETINFO, CONFIG GET), PING.
func adminCommand(name string) bool {
	switch name {
	case "info", "flushall", "hello", "ping", "select", "command":
		return true
	}
	return strings.HasPrefix(name, "client") || strings.HasPrefix(name, "config")
}

// snapshot reads INFO commandstats and INFO cpu from the server.
func snapshot(ctx context.Context, c *redis.Client) (serverSnap, error) {
	s := serverSnap{at: time.Now()}
	text, err := c.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return s, fmt.Errorf("perf: INFO commandstats cpu: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(name, "cmdstat_"):
			cmd := strings.TrimPrefix(name, "cmdstat_")
			if adminCommand(cmd) {
				continue
			}
			calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
			n, err := strconv.ParseInt(calls, 10, 64)
			if err != nil {
				return s, fmt.Errorf("perf: INFO commandstats: bad line %q", line)
			}
			s.commands += n
		case name == "used_cpu_sys" || name == "used_cpu_user":
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				return s, fmt.Errorf("perf: INFO cpu: bad line %q", line)
			}
			s.cpuS += v
		}
	}
	return s, nil
}

// serverDelta is the server's work between two snapshots: commands served
// and CPU busy in cores (CPU seconds per wall second).
func serverDelta(a, b serverSnap) (commands int64, cores float64) {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 {
		return b.commands - a.commands, 0
	}
	return b.commands - a.commands, (b.cpuS - a.cpuS) / wall
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
