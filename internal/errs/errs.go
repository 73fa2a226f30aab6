// Package errs holds the one error type that lockbench's packages share:
// an error with its own one-line message that wraps several others.
package errs

// New returns an error whose message is msg and which wraps each of errs
// (errors.Is and errors.As match every one, as with Go 1.20's multiple
// wrapping), so a message can name the problem and the fix in its own
// words while callers still test for the sentinel errors behind it.
func New(msg string, errs ...error) error { return &multi{msg: msg, errs: errs} }

type multi struct {
	msg  string
	errs []error
}

func (e *multi) Error() string   { return e.msg }
func (e *multi) Unwrap() []error { return e.errs }
