// Package leakcheck finds server processes a test left behind: children of
// the test process (etcd, java running ZooKeeper, redis-server) that are
// still alive when the test ends, although every cluster it started should
// have killed and reaped them.
package leakcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Proc is one process: its id and its command name (/proc/PID/comm).
type Proc struct {
	PID  int
	Name string
}

// String returns "NAME (pid PID)".
func (p Proc) String() string { return fmt.Sprintf("%s (pid %d)", p.Name, p.PID) }

// Children returns the live (not zombie) child processes of this process
// whose command name is one of names (all children when names is empty).
func Children(names ...string) []Proc {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []Proc
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		name := s[open+1 : end]
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil || ppid != self {
			continue
		}
		if len(names) > 0 && !slices.Contains(names, name) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		out = append(out, Proc{PID: pid, Name: name})
	}
	return out
}

// Servers are the command names of the servers lockbench starts.
var Servers = []string{"etcd", "java", "redis-server", "redis-sentinel"}

// AtEnd makes t fail when, at its end (after the cleanups registered
// after this call, such as a cluster's Stop), a child process named one of
// names (Servers when none) is still alive; it waits up to 2 s for a
// process being killed to go. Call it before starting any server.
func AtEnd(t testing.TB, names ...string) {
	t.Helper()
	if len(names) == 0 {
		names = Servers
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for {
			left := Children(names...)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("leakcheck: server processes left behind: %v", left)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
