package errs

import "errors"

// ErrUsage is wrapped by errors caused by the caller's input: an unknown
// strategy, scenario or profile, an impossible flag value or combination,
// an unreadable history given to lockbench check. lockbench exits 2 on it.
// Every command (run, bench, check, list, report, compare, perf) and every
// package that checks user input (bench, validate) wraps this one sentinel,
// so the exit code does not depend on which package found the problem.
var ErrUsage = errors.New("usage error")
