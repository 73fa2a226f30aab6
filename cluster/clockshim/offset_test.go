package clockshim

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOffsetFile: WriteOffset's value reads back through ReadOffset (also
// a negative one, replacing the last), Seen reports nothing before the
// shim wrote its ".seen" file and the offset after, and a file that holds
// no offset is an error naming it.
func TestOffsetFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock-offset")
	for _, d := range []time.Duration{20 * time.Second, -5 * time.Second} {
		if err := WriteOffset(path, d); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadOffset(path); err != nil || got != d {
			t.Errorf("ReadOffset after WriteOffset(%v) = %v, %v", d, got, err)
		}
	}
	if d, ok, err := Seen(path); ok || err != nil {
		t.Errorf("Seen before the shim wrote it = %v, %v, %v; want not ok", d, ok, err)
	}
	if err := WriteOffset(path+".seen", -5*time.Second); err != nil {
		t.Fatal(err)
	}
	if d, ok, err := Seen(path); !ok || err != nil || d != -5*time.Second {
		t.Errorf("Seen = %v, %v, %v; want -5s", d, ok, err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("soon\n"), 0o644)
	if _, err := ReadOffset(bad); err == nil {
		t.Error("ReadOffset of a file without an offset succeeded")
	}
}

// TestSourceIsTheShim: Source returns the embedded C source, which
// replaces clock_gettime, as a copy.
func TestSourceIsTheShim(t *testing.T) {
	s := Source()
	if !bytes.Contains(s, []byte("clock_gettime")) {
		t.Fatalf("Source() holds no clock_gettime: %.60q", s)
	}
	s[0] = 'X'
	if Source()[0] == 'X' {
		t.Error("Source returns the embedded bytes, not a copy")
	}
}
