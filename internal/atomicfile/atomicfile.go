// Package atomicfile writes a file so that a reader never sees half of it:
// through a temporary file in the same folder, renamed into place.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path (mode 0644: reports are meant to be shared)
// through a temporary file in path's folder and a rename. The temporary
// file is removed on failure; the error names path.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(name, 0o644)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
