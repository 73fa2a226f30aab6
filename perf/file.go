package perf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/results"
)

// FileName is the file `lockbench perf` writes into its results folder:
// a File as JSON. It is not a results.json: perf measures lockbench
// itself, it judges no lock.
const FileName = "perf.json"

// SchemaVersion is the version of File this lockbench writes and reads.
const SchemaVersion = 1

// ErrSchema is wrapped by Load's error for a file that is not a perf.json
// of SchemaVersion.
var ErrSchema = errors.New("perf: not a perf.json of this lockbench")

// File is what `lockbench perf` writes: who measured what, on which
// machine and server, and the Report.
type File struct {
	SchemaVersion int `json:"schema_version"`
	// Tool is "lockbench VERSION"; Command reproduces the measurement.
	Tool    string `json:"tool"`
	Command string `json:"command"`
	// Started and Finished are RFC 3339 times (UTC).
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Host is the machine; Redis the redis-server version.
	Host  results.Host `json:"host"`
	Redis string       `json:"redis"`
	// Strategy is the strategy lockbench ran (Strategy), TTLMs its TTL.
	Strategy string  `json:"strategy"`
	TTLMs    float64 `json:"ttl_ms"`
	// Report holds every measure: the comparisons with redis-benchmark
	// (per client count and round) and the sweep.
	Report Report `json:"report"`
}

// Write writes f as dir/perf.json (schema_version SchemaVersion), replacing
// any earlier one through a temporary file, so a reader never sees half a
// file.
func Write(dir string, f *File) error {
	out := *f
	out.SchemaVersion = SchemaVersion
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("perf: encode: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("perf: create folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return fmt.Errorf("perf: write %s: %w", FileName, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("perf: write %s: %w", FileName, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("perf: write %s: %w", FileName, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("perf: write %s: %w", FileName, err)
	}
	return nil
}

// Load reads a perf.json. A missing file gives an error wrapping
// fs.ErrNotExist; a file that is not a perf.json of SchemaVersion one
// wrapping ErrSchema.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSchema, path, err)
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema_version %d, this lockbench reads %d", ErrSchema, path, f.SchemaVersion, SchemaVersion)
	}
	return &f, nil
}

// In reports whether dir holds a perf.json (of any version).
func In(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, FileName))
	return err == nil && st.Mode().IsRegular()
}

// RemoveEarlier removes the perf measurement dir already holds: the
// recorded histories its perf.json lists (inside dir only) and perf.json
// itself; a histories folder left empty goes too. It returns the earlier
// File (nil when there was none or it could not be read).
func RemoveEarlier(dir string) (*File, error) {
	f, err := Load(filepath.Join(dir, FileName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		f = nil // unreadable: remove the file alone
	}
	var paths []string
	if f != nil {
		for _, c := range f.Report.Comparisons {
			for _, rd := range c.Rounds {
				for _, m := range rd {
					if m.History != "" && filepath.IsLocal(m.History) {
						paths = append(paths, filepath.Join(dir, m.History))
					}
				}
			}
		}
	}
	paths = append(paths, filepath.Join(dir, FileName))
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return f, fmt.Errorf("perf: removing the earlier measurement's %s: %w", p, err)
		}
	}
	os.Remove(filepath.Join(dir, "histories")) // only if empty
	return f, nil
}
