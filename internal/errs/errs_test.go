package errs

import (
	"errors"
	"io/fs"
	"testing"
)

func TestNew(t *testing.T) {
	a, b := errors.New("a"), fs.ErrNotExist
	err := New("the message", a, b)
	if err.Error() != "the message" || !errors.Is(err, a) || !errors.Is(err, b) || errors.Is(err, fs.ErrExist) {
		t.Errorf("New: %q, Is(a) %v, Is(b) %v, Is(other) %v", err, errors.Is(err, a), errors.Is(err, b), errors.Is(err, fs.ErrExist))
	}
}
