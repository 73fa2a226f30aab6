package proxy

import "testing"

// TestFirstCommand parses the first command of RESP and inline chunks.
func TestFirstCommand(t *testing.T) {
	for in, want := range map[string]string{
		"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n": "SET",
		"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n":   "PING",
		"PING\r\n": "PING",
		"":         "",
		"*2\r\n":   "",
	} {
		if got := firstCommand([]byte(in)); got != want {
			t.Errorf("firstCommand(%q) = %q, want %q", in, got, want)
		}
	}
}
