// Package outdir guards the output folder of a run or bench: it refuses a
// folder holding files lockbench did not write, removes an earlier run's
// files before a new one, finds histories an interrupted run left, and
// turns file-system errors into one-line advice naming the fix.
package outdir

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
	"syscall"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
)

// CheckOut checks a results folder given as --out before anything starts,
// with errors wrapping errs.ErrUsage (exit 2) naming the fix: an --out that is
// empty or only spaces, and a folder holding a file lockbench did not write
// that a run would overwrite (NotWrittenByLockbench).
func CheckOut(dir string) error {
	if strings.TrimSpace(dir) == "" {
		return fmt.Errorf("%w: --out must not be empty or only spaces (got %q): give a results folder or leave the flag out for the default", errs.ErrUsage, dir)
	}
	if p := NotWrittenByLockbench(dir); p != "" {
		return fmt.Errorf("%w: --out %s holds %s, which lockbench did not write and would overwrite: choose another --out (or move that file away)", errs.ErrUsage, dir, p)
	}
	return nil
}

// Described names the results of a profile for messages: "a run",
// "profile perf" or "a bench (profile ci)".
func Described(profile string) string {
	switch profile {
	case "run":
		return "a run"
	case "perf":
		return "profile perf"
	}
	return fmt.Sprintf("a bench (profile %s)", profile)
}

// OutDirError is the error for a results folder that cannot be created or
// written before anything ran; it names the path once, the cause and the
// fix for it, and wraps err and cluster.ErrEnvironment (exit 3).
func OutDirError(dir string, err error) error {
	if inTheWay(err) {
		if f := fileOnPath(dir); f != "" {
			// --out naming a file (or a folder under one) once got the
			// general advice about plots and results.json.
			msg := fmt.Sprintf("cannot write results folder %s: %s is a file, not a folder: choose another --out (or move that file away); nothing was written", dir, f)
			if f == filepath.Clean(dir) {
				msg = fmt.Sprintf("cannot write results: --out %s is a file, not a folder: choose another --out (or move that file away); nothing was written", dir)
			}
			return errs.New(msg, err, cluster.ErrEnvironment)
		}
	}
	where, cause := pathAndCause(dir, err)
	msg := fmt.Sprintf("cannot write results folder %s: %s%s: %s; nothing was written", dir, where, cause, advice(err, "--out"))
	return errs.New(msg, err, cluster.ErrEnvironment)
}

// ErrNotWritten is wrapped by OutputError: the runs were carried out (and
// checked) but their results could not all be written. It wraps
// cluster.ErrEnvironment (exit 3).
var ErrNotWritten = fmt.Errorf("results not written: %w", cluster.ErrEnvironment)

// OutputFix is the fix OutputError names for run and bench (--out): it
// offers another --out beside the fix for the error's cause.
const OutputFix = "choose another --out"

// OutputError is the error for the results (results.json, the plots, the
// report) that could not be written into the results folder dir after
// the runs. It names the file once, the cause, the fix for that cause (no
// space, no permission, something in the way; with fix OutputFix it also
// offers another --out, any other fix replaces the one for something in
// the way), and what was written: results.json or nothing. It wraps err
// and ErrNotWritten (exit 3).
func OutputError(dir string, err error, fix string) error {
	if errors.Is(err, ErrNotWritten) { // already an OutputError
		return err
	}
	flag := ""
	if fix == OutputFix {
		flag = "--out"
	}
	adv := advice(err, flag)
	if fix != OutputFix && inTheWay(err) {
		adv = fix
	}
	where, cause := pathAndCause(dir, err)
	written := "nothing was written (no results.json, report.md, index.html or plots)"
	if st, serr := os.Stat(filepath.Join(dir, results.FileName)); serr == nil && st.Mode().IsRegular() {
		written = fmt.Sprintf("%s was written; the report (report.md, index.html, plots) was not, or only in part", results.FileName)
	}
	msg := fmt.Sprintf("cannot write the results into %s: %s%s: %s; %s", dir, where, cause, adv, written)
	return errs.New(msg, err, ErrNotWritten)
}

// pathAndCause splits err into the file it names ("" when that is dir
// itself or it names none; else the path and ": ") and its cause, so that
// a message names each path once. A temporary file (".results.json.123")
// is named as the file it was to become.
func pathAndCause(dir string, err error) (where, cause string) {
	var pe *fs.PathError
	var le *os.LinkError
	path := ""
	switch {
	case errors.As(err, &pe):
		path, err = pe.Path, pe.Err
	case errors.As(err, &le):
		path, err = le.New, le.Err
	}
	switch base := filepath.Base(path); {
	case strings.HasPrefix(base, ".lockbench-write-check-"):
		path = filepath.Dir(path) // CheckWritable's probe: the folder
	case strings.HasPrefix(base, ".") && strings.LastIndex(base, ".") > 0:
		// writeAtomic's ".NAME.RANDOM" is named as NAME.
		path = filepath.Join(filepath.Dir(path), base[1:strings.LastIndex(base, ".")])
	}
	if path == "" || filepath.Clean(path) == filepath.Clean(dir) {
		return "", err.Error()
	}
	return path + ": ", err.Error()
}

// inTheWay reports whether err says a file stands where lockbench writes
// a folder or the reverse.
func inTheWay(err error) bool {
	return errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.EISDIR)
}

// advice is the fix for a write error err: free space (ENOSPC), make the
// folder writable (EACCES, EPERM, EROFS) or move away what is in the way
// (ENOTDIR, EEXIST, EISDIR, and any other cause); flag ("--out" or "")
// adds "or choose another --out".
func advice(err error, flag string) string {
	var fix string
	switch {
	case errors.Is(err, syscall.ENOSPC):
		fix = "the disk is full: free space on it"
	case errors.Is(err, syscall.EROFS):
		fix = "the file system is read-only: remount it read-write"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		fix = "make the folder writable for this user"
	case inTheWay(err):
		fix = "move away what is in the way there (a file where lockbench writes a folder, such as plots, or a folder where it writes a file, such as results.json)"
	default:
		fix = "fix the cause named"
	}
	if flag != "" {
		fix += ", or choose another " + flag
	}
	return fix
}

// ReplaceEarlier removes the earlier run a results folder holds (see
// RemoveEarlier) and the histories of interrupted runs in
// dir/histories (InterruptedHistories), so that the new run's files are
// the only ones there, and tells notef (when not nil) what it removed. It
// is called after the up-front checks, so bad input leaves the earlier run
// in place. A folder holding a file lockbench did not write is refused
// (CheckOut, exit 2) and left alone; a file that cannot be removed is an
// OutDirError (exit 3).
func ReplaceEarlier(dir string, notef func(format string, args ...any)) error {
	if err := CheckOut(dir); err != nil {
		return err
	}
	old, err := RemoveEarlier(dir)
	if err != nil {
		return OutDirError(dir, err)
	}
	stale := InterruptedHistories(dir)
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return OutDirError(dir, err)
		}
	}
	if len(stale) > 0 {
		os.Remove(filepath.Join(dir, "histories")) // only if empty
	}
	if notef == nil {
		return nil
	}
	if old != nil {
		what := fmt.Sprintf("an earlier bench (profile %s, started %s)", old.Profile, old.Started)
		switch old.Profile {
		case "run":
			what = fmt.Sprintf("an earlier run (started %s)", old.Started)
		case "perf":
			what = fmt.Sprintf("an earlier perf run (started %s)", old.Started)
		}
		notef("note: %s held %s: its results, report, histories and plots were removed", dir, what)
	}
	if len(stale) > 0 {
		notef("note: %s held %d history file(s) of interrupted runs (end line \"interrupted\":true) in histories/: removed", dir, len(stale))
	}
	return nil
}

// InterruptedHistories returns the lockbench histories in dir/histories
// (*.jsonl files) whose last line is the end line of an interrupted run,
// {"end_operations":N,"interrupted":true} (with the run's clock
// measurement and largest stall when it has them). Only each file's last line is
// read; nothing else is returned.
func InterruptedHistories(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "histories", "*.jsonl"))
	var out []string
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && interruptedEnd(p, st.Size()) {
			out = append(out, p)
		}
	}
	return out
}

// interruptedEnd reports whether the last line of the file at path (of
// size bytes) is an end line saying the run was interrupted.
func interruptedEnd(path string, size int64) bool {
	const tail = 1024 // an end line is about 50 bytes, up to ~300 with its clock (history.ClockSync) and stall
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	off := max(size-tail, 0)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	buf = bytes.TrimRight(buf, "\n")
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && off > 0 {
		return false // the last line is longer than any end line
	}
	var end map[string]json.RawMessage
	if json.Unmarshal(buf[i+1:], &end) != nil || end["end_operations"] == nil {
		return false // an operation line, or no end line
	}
	for k := range end {
		switch k {
		case "end_operations", "interrupted", "incomplete", "clock", "max_stall_ns": // history's end line
		default:
			return false // not lockbench's end line
		}
	}
	var n int64
	var interrupted bool
	return json.Unmarshal(end["end_operations"], &n) == nil &&
		json.Unmarshal(end["interrupted"], &interrupted) == nil && interrupted
}

// CheckWritable returns nil when files can be created in the folder dir,
// else the error of the attempt. It creates dir (and its parents) to try,
// and removes what it created: a file, and dir itself if it did not exist
// and the folders it made (so a command refused afterwards leaves no
// empty folder).
func CheckWritable(dir string) error {
	var made []string // the missing folders, dir first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	defer func() {
		for _, d := range made {
			os.Remove(d) // only if empty
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".lockbench-write-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// fileOnPath is dir, or the nearest of its parents, when that exists and is
// not a folder; "" when the nearest that exists is a folder.
func fileOnPath(dir string) string {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				return ""
			}
			return p
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

// NotWrittenByLockbench returns the path of a file in dir that a run
// written there would overwrite although lockbench did not write it: a
// results.json that is not lockbench's (not a JSON object with a
// schema_version, or one whose tool is not lockbench), or a report.md,
// details.md, index.html or bench.txt with no lockbench results.json
// beside them. It returns ""
// when there is none (dir missing or empty, or a lockbench results folder).
func NotWrittenByLockbench(dir string) string {
	res := filepath.Join(dir, results.FileName)
	if st, err := os.Stat(res); err == nil && st.Mode().IsRegular() {
		if !writtenByLockbench(res) {
			return res
		}
		return ""
	}
	for _, name := range []string{results.ReportMarkdown, results.DetailsMarkdown, results.ReportHTML, results.BenchText} {
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
func RemoveEarlier(dir string) (*results.File, error) {
	f, err := results.Load(filepath.Join(dir, results.FileName))
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
		m, _ := filepath.Glob(filepath.Join(dir, results.PlotsFolder, pat))
		paths = append(paths, m...)
	}
	paths = append(paths, filepath.Join(dir, results.ReportMarkdown), filepath.Join(dir, results.DetailsMarkdown), filepath.Join(dir, results.ReportHTML), filepath.Join(dir, results.BenchText), filepath.Join(dir, results.FileName))
	folders := map[string]bool{filepath.Join(dir, results.PlotsFolder): true}
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
