package figures

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
)

// TestWriteLoadRoundTrip: Write adds the cost table to what results.Load
// reads back, and nothing else changes.
func TestWriteLoadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	f := resultstest.SampleFile()
	if err := Write(dir, f); err != nil {
		t.Fatal(err)
	}
	if f.SchemaVersion != 0 {
		t.Errorf("Write modified its input: SchemaVersion = %d", f.SchemaVersion)
	}
	got, err := results.Load(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	want := *f
	want.SchemaVersion = results.SchemaVersion
	want.CostTable = CostTableOf(f)
	if len(want.CostTable) == 0 {
		t.Error("Write wrote no cost table for a file with baseline and cost runs")
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, &want)
	}
	data, err := os.ReadFile(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), fmt.Sprintf("\n  \"schema_version\": %d,", results.SchemaVersion)) {
		t.Errorf("results.json is not indented or lacks schema_version:\n%.200s", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("folder holds %d entries, want only %s and %s (no temporary files)", len(entries), results.FileName, results.BenchText)
	}
}
