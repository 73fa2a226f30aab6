package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/errs"
)

// File names written in a results folder.
const (
	// FileName is the results file Write creates in its folder.
	FileName = "results.json"
	// ReportMarkdown is the Markdown report WriteReport creates.
	ReportMarkdown = "report.md"
	// ReportHTML is the HTML report WriteReport creates.
	ReportHTML = "index.html"
	// PlotsFolder is the sub-folder holding the report's plots (PNG and SVG).
	PlotsFolder = "plots"
	// CapacityPlotName is the capacity plot's file name in PlotsFolder,
	// without its extension (.png, .svg): the report's cost table links it.
	CapacityPlotName = "capacity"
)

// ErrSchemaVersion is wrapped by Load and Write when a file's schema_version
// is not SchemaVersion (Load's error wraps ErrCorrupt too).
var ErrSchemaVersion = errors.New("results: unsupported schema version")

// ErrCorrupt is wrapped by Load when the file is not valid results JSON.
var ErrCorrupt = errors.New("results: corrupt file")

// Write writes f as indented JSON to dir/results.json, creating dir if
// needed, and its cost samples to dir/bench.txt (WriteBenchText) when a
// run has any (Run.Windows). Each file
// is written to a temporary name and renamed, so a reader never sees half
// a file. A zero f.SchemaVersion is written as SchemaVersion (f itself is
// not modified); its CostTable is computed from its runs (CostTableOf);
// any other version than SchemaVersion is refused with an error
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
	out.CostTable = CostTableOf(&out)
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encode: %w", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: create folder: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, FileName), data); err != nil {
		return err
	}
	if !hasWindows(&out) {
		return nil // lockbench perf's results: no cost samples
	}
	return WriteBenchText(dir, &out)
}

// hasWindows reports whether a run of f (or of its sweep) has cost windows.
func hasWindows(f *File) bool {
	for _, r := range slices.Concat(f.Runs, f.Sweep, f.Cost) {
		if len(r.Windows) > 0 {
			return true
		}
	}
	return false
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

// NotWrittenByLockbench returns the path of a file in dir that a run
// written there would overwrite although lockbench did not write it: a
// results.json that is not lockbench's (not a JSON object with a
// schema_version, or one whose tool is not lockbench), or a report.md,
// details.md, index.html or bench.txt with no lockbench results.json
// beside them. It returns ""
// when there is none (dir missing or empty, or a lockbench results folder).
func NotWrittenByLockbench(dir string) string {
	res := filepath.Join(dir, FileName)
	if st, err := os.Stat(res); err == nil && st.Mode().IsRegular() {
		if !writtenByLockbench(res) {
			return res
		}
		return ""
	}
	for _, name := range []string{ReportMarkdown, DetailsMarkdown, ReportHTML, BenchText} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// writtenByLockbench reports whether the file at path looks like a
// results.json written by lockbench (any schema version): a JSON object
// with a numeric schema_version and, if it names its tool, lockbench.
func writtenByLockbench(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var head struct {
		SchemaVersion *int    `json:"schema_version"`
		Tool          *string `json:"tool"`
	}
	if json.Unmarshal(data, &head) != nil || head.SchemaVersion == nil {
		return false
	}
	return head.Tool == nil || *head.Tool == "" || strings.HasPrefix(*head.Tool, "lockbench")
}

// RemoveEarlier removes the run a results folder already holds, so that a
// new run written there leaves no file of the old one beside its own: the
// histories, adapter logs and porcupine visualisations that dir/results.json
// lists (paths inside dir only), the plots (PNG and SVG in dir/plots),
// report.md, details.md, index.html, bench.txt and results.json itself;
// folders left empty are removed too.
// Other files are left alone. It returns the File it found (nil, nil when
// dir holds no results.json, or one that Load refuses, which the new run
// overwrites anyway). A file that cannot be removed is an error naming it.
func RemoveEarlier(dir string) (*File, error) {
	f, err := Load(filepath.Join(dir, FileName))
	if err != nil {
		return nil, nil
	}
	var paths []string
	for _, r := range slices.Concat(f.Runs, f.Sweep, f.Cost) {
		if r.History == "" {
			continue
		}
		resourceVis := strings.TrimSuffix(r.History, filepath.Ext(r.History)) + "-resource.html"
		adapterLog := strings.TrimSuffix(r.History, filepath.Ext(r.History)) + ".adapter.log" // exec: strategies
		for _, p := range []string{r.History, r.Visualization, resourceVis, adapterLog} {
			if p != "" && filepath.IsLocal(p) {
				paths = append(paths, filepath.Join(dir, p))
			}
		}
	}
	for _, pat := range []string{"*.png", "*.svg"} {
		m, _ := filepath.Glob(filepath.Join(dir, PlotsFolder, pat))
		paths = append(paths, m...)
	}
	paths = append(paths, filepath.Join(dir, ReportMarkdown), filepath.Join(dir, DetailsMarkdown), filepath.Join(dir, ReportHTML), filepath.Join(dir, BenchText), filepath.Join(dir, FileName))
	folders := map[string]bool{filepath.Join(dir, PlotsFolder): true}
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return f, fmt.Errorf("results: removing the earlier run's %s: %w", p, err)
		}
		folders[filepath.Dir(p)] = true
	}
	for d := range folders {
		if d != filepath.Clean(dir) {
			os.Remove(d) // only if empty
		}
	}
	return f, nil
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
