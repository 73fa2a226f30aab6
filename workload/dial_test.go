package workload

import (
	"net"
	"syscall"
	"testing"
)

// TestUncheckedConnHidesItsDescriptor: go-redis skips its health check only
// for connections that are not a syscall.Conn.
func TestUncheckedConnHidesItsDescriptor(t *testing.T) {
	var c net.Conn = uncheckedConn{}
	if _, ok := c.(syscall.Conn); ok {
		t.Fatal("uncheckedConn implements syscall.Conn: go-redis would run its health check")
	}
}
