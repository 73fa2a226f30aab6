package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File names written in a results folder.
const (
	// FileName is the results file Write creates in its folder.
	FileName = "results.json"
	// ReportMarkdown is the Markdown report WriteReport creates.
	ReportMarkdown = "report.md"
	// ReportHTML is the HTML report WriteReport creates.
	ReportHTML = "index.html"
)

// ErrSchemaVersion is wrapped by Load and Write when a file's schema_version
// is not SchemaVersion.
var ErrSchemaVersion = errors.New("results: unsupported schema version")

// ErrCorrupt is wrapped by Load when the file is not valid results JSON.
var ErrCorrupt = errors.New("results: corrupt file")

// Write writes f as indented JSON to dir/results.json, creating dir if needed.
// The file is written to a temporary name and renamed, so a reader never sees
// half a file. A zero f.SchemaVersion is written as SchemaVersion (f itself is
// not modified); any other version than SchemaVersion is refused with an error
// wrapping ErrSchemaVersion. Other errors come from the file system.
func Write(dir string, f *File) error {
	if f == nil {
		return errors.New("results: write: nil File")
	}
	out := *f
	switch out.SchemaVersion {
	case 0:
		out.SchemaVersion = SchemaVersion
	case SchemaVersion:
	default:
		return fmt.Errorf("%w: cannot write schema_version %d, this lockbench writes %d",
			ErrSchemaVersion, out.SchemaVersion, SchemaVersion)
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encode: %w", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: create folder: %w", err)
	}
	return writeAtomic(filepath.Join(dir, FileName), data)
}

// Load reads a results.json written by Write (path is the file, not its
// folder). It returns an error wrapping ErrCorrupt when the file is not JSON
// or has no schema_version, and one wrapping ErrSchemaVersion, naming both
// versions, when it was written with another schema version. Read errors are
// wrapped as they come from the file system.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: %s: no schema_version field: not a lockbench results file", ErrCorrupt, path)
	}
	if v := *head.SchemaVersion; v != SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema_version %d, this lockbench reads %d: re-run the bench or use the lockbench version that wrote it",
			ErrSchemaVersion, path, v, SchemaVersion)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	return &f, nil
}

// writeAtomic writes data to a temporary file beside path and renames it to path.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		// CreateTemp makes the file 0600; reports are meant to be shared.
		werr = os.Chmod(name, 0o644)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("results: write %s: %w", path, werr)
	}
	return nil
}
