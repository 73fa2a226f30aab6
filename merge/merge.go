// Package merge writes the folder of a bench run in parts (lockbench
// bench --shard I/N on several runners) as one bench would have written
// it: the parts' histories and hunt folder copied, then results.json,
// bench.txt, the plots and the report of the merged results file
// (results.MergeShards joins the files themselves). lockbench merge
// drives it.
package merge

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// WriteMerged writes a merged bench f (results.MergeShards of the
// parts read from dirs) into out as one bench would have: every file of
// each part's histories folder copied into out/histories (two parts
// holding one file name is an error: they were not parts of one bench),
// then results.json, bench.txt, the plots and the report (finish keeps
// f's own Finished). out must not be one of dirs, and must hold no
// earlier results (the caller clears it: outdir.ReplaceEarlier). Errors
// are outdir.OutputError (exit 3) for files that cannot be written,
// wrapping errs.ErrUsage for a name two parts hold.
func WriteMerged(out string, dirs []string, f *results.File) error {
	copied := map[string]string{} // file name → the part that had it
	for _, dir := range dirs {
		src := filepath.Join(dir, "histories")
		entries, err := os.ReadDir(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a part with no run (more parts than cells)
		}
		if err != nil {
			return fmt.Errorf("merge: read %s: %w", src, err)
		}
		if err := os.MkdirAll(filepath.Join(out, "histories"), 0o755); err != nil {
			return outdir.OutDirError(out, err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if other, dup := copied[e.Name()]; dup {
				return fmt.Errorf("%w: merge: %s and %s both hold histories/%s: they are not parts of one bench", errs.ErrUsage, other, dir, e.Name())
			}
			copied[e.Name()] = dir
			if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(out, "histories", e.Name())); err != nil {
				return outdir.OutputError(out, err, outdir.OutputFix)
			}
		}
	}
	if err := figures.Write(out, f); err != nil {
		return outdir.OutputError(out, err, outdir.OutputFix)
	}
	if err := report.Render(out, f); err != nil {
		return outdir.OutputError(out, err, outdir.OutputFix)
	}
	return nil
}

// CopyTree copies the regular files under src into dst (made), keeping
// their relative paths: the hunt folder of the part that ran the
// profile's hunt, for lockbench merge.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, to)
		}
		return nil
	})
}

// copyFile copies the regular file src to dst (created or truncated,
// mode 0644).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}
