package cluster

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
	s, err := procState(pid)
	return err == nil && s != "Z" && s != "X"
}
