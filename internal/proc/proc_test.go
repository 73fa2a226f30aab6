package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestAlive checks the liveness test on this process, a stopped child, a
// zombie (exited, not yet reaped) and a reaped child.
func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Errorf("Alive(self) = false")
	}
	for _, pid := range []int{0, -1} {
		if Alive(pid) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep binary: %v", err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Kill()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			s, err := State(pid)
			if err == nil && s == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pid %d state %q (%v), want %s", pid, s, err, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitState("T")
	if !Alive(pid) {
		t.Errorf("a stopped process is not alive")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState("Z")
	if Alive(pid) {
		t.Errorf("a zombie is alive")
	}
	cmd.Wait()
	if Alive(pid) {
		t.Errorf("a reaped process is alive")
	}
}
