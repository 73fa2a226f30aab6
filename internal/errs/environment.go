package errs

import (
	"errors"
	"strings"
)

// ErrEnvironment is wrapped by every error caused by the machine rather
// than by the caller: a server binary not installed, a port in use, the
// clock shim missing or not loadable, gcc missing, no Docker daemon, a
// server not answering before its deadline. lockbench exits 3 on it.
// cluster.ErrEnvironment is this same error, so errors.Is matches either
// name. Its text carries no package prefix: the messages that wrap it
// name their package once.
var ErrEnvironment = errors.New("environment error")

// FirstLine returns the first line of err's message, to quote a
// multi-line error (Docker's, a compiler's) in a one-line message.
func FirstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
