package impl

import (
	"context"
	"errors"

	"github.com/lockbench/lockbench/history"
)

// Reasons a Locker may state for a failed or unknown call (CallError.Reason),
// as the history records them (history.Reasons).
const (
	ReasonExpired     = history.ReasonExpired
	ReasonTaken       = history.ReasonTaken
	ReasonUnavailable = history.ReasonUnavailable
	ReasonCancelled   = history.ReasonCancelled
	ReasonUnknown     = history.ReasonUnknown
)

// ErrCancelled is the cause (context.Cause) of a lock call's ctx that a
// nemesis cancelled in flight (the cancel fault; see Canceller), and is
// wrapped by the error a Locker returns for a call it abandoned because
// of it. Such an outcome is unknown (info, reason cancelled): the call may
// have taken effect.
var ErrCancelled = errors.New("impl: call cancelled in flight")

// CallError is a failed or unknown lock call's error with what the lock
// said about it besides its text: its stated reason, and for an acquire
// the token it wrote or tried. It wraps Err (ErrNotAcquired, ErrNotHeld or
// an unknown outcome's error), so errors.Is sees through it. Make one with
// WithReason or WithToken; read it with Reason and TriedToken.
type CallError struct {
	Err error
	// Reason is one of the Reason* constants, or "".
	Reason string
	// Token is the token an acquire wrote or tried, or "".
	Token string
}

// Error returns Err's message.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *CallError) Unwrap() error { return e.Err }

// WithReason returns err carrying reason (a Reason* constant; "" leaves
// err unchanged), keeping a token err already carries. nil stays nil.
func WithReason(err error, reason string) error {
	if err == nil || reason == "" {
		return err
	}
	if ce, ok := err.(*CallError); ok {
		c := *ce
		c.Reason = reason
		return &c
	}
	return &CallError{Err: err, Reason: reason}
}

// WithToken returns err carrying the token an acquire wrote or tried (""
// leaves err unchanged), keeping a reason err already carries. nil stays nil.
func WithToken(err error, token string) error {
	if err == nil || token == "" {
		return err
	}
	if ce, ok := err.(*CallError); ok {
		c := *ce
		c.Token = token
		return &c
	}
	return &CallError{Err: err, Token: token}
}

// Reason returns the stated reason of a failed or unknown call's error:
// the Reason of the outermost CallError that has one, ReasonCancelled for
// an error wrapping ErrCancelled, else "".
func Reason(err error) string {
	for e := err; e != nil; {
		var ce *CallError
		if !errors.As(e, &ce) {
			break
		}
		if ce.Reason != "" {
			return ce.Reason
		}
		e = ce.Err
	}
	if errors.Is(err, ErrCancelled) {
		return ReasonCancelled
	}
	return ""
}

// TriedToken returns the token a failed or unknown acquire wrote or tried,
// as its error carries it (WithToken), or "".
func TriedToken(err error) string {
	for e := err; e != nil; {
		var ce *CallError
		if !errors.As(e, &ce) {
			break
		}
		if ce.Token != "" {
			return ce.Token
		}
		e = ce.Err
	}
	return ""
}

// Checker is implemented by a Locker that can say, right before a write,
// whether it still believes it holds a lease: a protocol-2 adapter that
// declares "check", or an in-process strategy with a view of its own. The
// usage policy asks it when Policy.AskLock is set, and stops the critical
// section unless it answers true with a nil error (a lock that cannot say
// must be assumed lost).
type Checker interface {
	// Check returns true when the lock still holds lease, false when not,
	// and an error when it cannot tell (then the client stops). ctx bounds
	// the call. A validity it reports moves lease.Validity.
	Check(ctx context.Context, lease *Lease) (valid bool, err error)
}

// Extender is implemented by a Locker that extends a held lease on
// request (a protocol-2 adapter serving extend; in-process strategies
// renew by themselves and report through Config.OnRenew). Extend returns
// nil (extended; a validity the lock reported moves lease.Validity),
// ErrNotHeld (the key was gone or another owner's), or another error
// (unknown); errors may carry a reason (Reason).
type Extender interface {
	Extend(ctx context.Context, lease *Lease) error
}

// Canceller cancels one lock call in flight: the handle a nemesis's
// cancel fault holds on a call. Cancel returns at once and may be called
// from any goroutine, any number of times; after the call returned it does
// nothing. The call's ctx then reports Done, with context.Cause
// ErrCancelled: an in-process strategy stops where it watches its ctx (a
// pool wait, a retry loop, a library's call); an adapter is sent a cancel
// request (protocol 2, "cancel": true) or lockbench stops waiting for its
// reply. The call ends as unknown with reason cancelled, or with its real
// outcome when it completed first.
type Canceller interface {
	Cancel()
}
