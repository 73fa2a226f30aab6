// Package proc reads the state of a process on this host from /proc:
// whether it is alive (Alive) and its state and stat fields (State, Stat).
// cluster's nodes, its docker sweep and the fault scenarios' evidence use
// it.
package proc

import (
	"fmt"
	"os"
	"strings"
)

// Alive reports whether process pid runs on this host: /proc/PID/stat is
// readable and its state is neither Z (zombie: exited, not yet reaped by
// its parent) nor X (dead). A stopped process (SIGSTOP or a frozen
// container, state T) is alive. It returns false for pid ≤ 0 and for a
// pid this host's /proc does not show (a process in another PID namespace,
// a container of a remote Docker daemon). It is the one liveness test of
// lockbench: a fault's evidence that a killed server is gone, the wait
// after a kill, and the check whether the lockbench that labelled a
// container still runs all use it.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	s, err := State(pid)
	return err == nil && s != "Z" && s != "X"
}

// State returns the state field of /proc/PID/stat (field 3): "S"
// sleeping, "R" running, "T" stopped, "Z" zombie, ... Errors: the file
// cannot be read (no such process on this host) or parsed.
func State(pid int) (string, error) {
	f, err := Stat(pid)
	if err != nil {
		return "", err
	}
	return f[0], nil
}

// Stat returns the fields of /proc/PID/stat from field 3 (the state)
// on: the fields after the parenthesised command name, which may itself
// contain spaces.
func Stat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	return f, nil
}
