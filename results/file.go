package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/internal/atomicfile"
	"github.com/lockbench/lockbench/internal/errs"
)

// File names written in a results folder.
const (
	// FileName is the results file Write creates in its folder.
	FileName = "results.json"
	// ReportMarkdown is the Markdown report report.WriteReport creates.
	ReportMarkdown = "report.md"
	// ReportHTML is the HTML report report.WriteReport creates.
	ReportHTML = "index.html"
	// PlotsFolder is the sub-folder holding the report's plots (PNG and SVG).
	PlotsFolder = "plots"
	// CapacityPlotName is the capacity plot's file name in PlotsFolder,
	// without its extension (.png, .svg): the report's cost table links it.
	CapacityPlotName = "capacity"
	// DetailsMarkdown is the report's details page (report.WriteReport),
	// linked from report.md.
	DetailsMarkdown = "details.md"
	// BenchText holds the cost samples in Go's benchmark format, for
	// benchstat (figures.WriteBenchText).
	BenchText = "bench.txt"
)

// ErrSchemaVersion is wrapped by Load and Write when a file's schema_version
// is not SchemaVersion (Load's error wraps ErrCorrupt too).
var ErrSchemaVersion = errors.New("results: unsupported schema version")

// ErrCorrupt is wrapped by Load when the file is not valid results JSON.
var ErrCorrupt = errors.New("results: corrupt file")

// Write writes f as indented JSON to dir/results.json, creating dir if
// needed, as given (figures.Write adds the cost table and bench.txt). The
// file is written to a temporary name and renamed, so a reader never sees
// half a file. A zero f.SchemaVersion is written as SchemaVersion (f itself
// is not modified); any other version than SchemaVersion is refused with
// an error wrapping ErrSchemaVersion. Other errors come from the file
// system.
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
// folder). Every error names the file, the problem and the fix, in one line:
// an error wrapping ErrCorrupt when the file is truncated, not JSON, has a
// field of the wrong type (the line and column are named) or has no
// schema_version; one wrapping ErrSchemaVersion (and ErrCorrupt, so callers
// map both to exit 2) when it was written with another schema version,
// naming both versions and the lockbench that wrote it. Read errors are
// wrapped as they come from the file system.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var head struct {
		SchemaVersion *int   `json:"schema_version"`
		Tool          string `json:"tool"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, decodeError(path, data, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: %s has no schema_version field: it is not a results.json written by lockbench; give the results.json of a lockbench bench or run folder", ErrCorrupt, path)
	}
	switch v := *head.SchemaVersion; {
	case v < SchemaVersion:
		writer := "the lockbench version that wrote it"
		if head.Tool != "" {
			writer = head.Tool + ", which wrote it"
		}
		return nil, versionError(fmt.Sprintf("results: %s has schema version %d, this lockbench reads %d: rerun lockbench bench (or run) to write it again, or read it with %s",
			path, v, SchemaVersion, writer))
	case v > SchemaVersion:
		by := ""
		if head.Tool != "" {
			by = " (" + head.Tool + ")"
		}
		return nil, versionError(fmt.Sprintf("results: %s has schema version %d, this lockbench reads %d: it was written by a newer lockbench%s; upgrade lockbench to read it",
			path, v, SchemaVersion, by))
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, decodeError(path, data, err)
	}
	return &f, nil
}

// versionError is an error with message msg that wraps both
// ErrSchemaVersion and ErrCorrupt.
func versionError(msg string) error {
	return errs.New(msg, ErrSchemaVersion, ErrCorrupt)
}

// decodeError turns a JSON decoding error into one that wraps ErrCorrupt and
// names the file, where in it the problem is (line and column) and the fix.
func decodeError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return fmt.Errorf("%w: %s is empty: rerun lockbench to write it again", ErrCorrupt, path)
	case errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Offset >= int64(len(bytes.TrimRight(data, " \t\r\n"))) && !strings.HasPrefix(syn.Error(), "invalid character")):
		return fmt.Errorf("%w: %s is truncated (it ends in the middle of the JSON, after %d bytes): the run that wrote it was cut short or the copy is incomplete; rerun lockbench or copy the file again: %w",
			ErrCorrupt, path, len(data), err)
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("%w: %s is not valid JSON at line %d, column %d: %w; rerun lockbench to write it again", ErrCorrupt, path, line, col, err)
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		return fmt.Errorf("%w: %s: field %q at line %d, column %d holds a JSON %s, want a %s: the file was edited or not written by lockbench; rerun lockbench to write it again",
			ErrCorrupt, path, typ.Field, line, col, typ.Value, typ.Type)
	}
	return fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
}

// lineCol converts a byte offset into data to a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// writeAtomic writes data to path through a temporary file and a
// rename (atomicfile.Write), so a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// LoadPath loads a results.json given as the file itself or as the results
// folder holding it; errors are Load's (a folder without results.json
// gives a not-exist error naming the path).
func LoadPath(path string) (*File, string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, FileName)
	}
	f, err := Load(path)
	if errors.Is(err, os.ErrNotExist) {
		// The path once, not also in the open error's text.
		return nil, path, errs.New(fmt.Sprintf("%s does not exist: give a results folder or its results.json", path), err)
	}
	return f, path, err
}
