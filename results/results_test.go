package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteRefusesOtherVersion(t *testing.T) {
	f := &File{Tool: "lockbench test"}
	f.SchemaVersion = SchemaVersion + 1
	err := Write(t.TempDir(), f)
	if !errors.Is(err, ErrSchemaVersion) {
		t.Fatalf("Write of schema_version %d: err = %v, want ErrSchemaVersion", f.SchemaVersion, err)
	}
}

// TestLoadErrors loads the fixtures in testdata: real schema 1, 2 and 3
// files (older), a real schema 2 file cut at two thirds, a real schema 4
// file claiming schema 5, one without schema_version, and hand-made broken
// ones. Each error must wrap ErrCorrupt (exit 2) and name the file, the
// problem and the fix.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string // file in testdata, or "" for content
		content  string // written to a temporary file; "" with no fixture: the file does not exist
		is       error
		mentions []string
	}{
		{name: "missing file", is: os.ErrNotExist, mentions: []string{"no such file"}},
		{name: "older schema", fixture: "schema-v1.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v1.json", "schema version 1, this lockbench reads 4", "rerun lockbench bench", "lockbench 0.1.0, which wrote it"}},
		{name: "schema 2", fixture: "schema-v2.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v2.json", "schema version 2, this lockbench reads 4", "rerun lockbench bench"}},
		{name: "schema 3", fixture: "schema-v3.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v3.json", "schema version 3, this lockbench reads 4", "rerun lockbench bench", "lockbench 0.3.0, which wrote it"}},
		{name: "newer schema", fixture: "schema-v5.json", is: ErrSchemaVersion,
			mentions: []string{"schema-v5.json", "schema version 5, this lockbench reads 4", "newer lockbench (lockbench 9.0.0)", "upgrade lockbench"}},
		{name: "no schema_version", fixture: "no-version.json", is: ErrCorrupt,
			mentions: []string{"no-version.json", "no schema_version", "give the results.json of a lockbench"}},
		{name: "truncated", fixture: "truncated.json", is: ErrCorrupt,
			mentions: []string{"truncated.json", "is truncated", "rerun lockbench"}},
		{name: "not JSON, one character", content: "x\n", is: ErrCorrupt,
			mentions: []string{"not valid JSON at line 1, column 1", "invalid character 'x'"}},
		{name: "empty", content: "\n", is: ErrCorrupt, mentions: []string{"is empty"}},
		{name: "not JSON", content: "{\n  \"schema_version\": 4,\n  \"runs\": [}\n}", is: ErrCorrupt,
			mentions: []string{"not valid JSON at line 3, column", "rerun lockbench"}},
		{name: "history given", content: `{"schema_version":1,"strategy":"x"}` + "\n" + `{"client":0}` + "\n", is: ErrCorrupt,
			mentions: []string{"not valid JSON at line 2"}},
		{name: "wrong type", content: `{"schema_version": 4, "runs": "many"}`, is: ErrCorrupt,
			mentions: []string{`field "runs"`, "line 1", "holds a JSON string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			switch {
			case tt.fixture != "":
				path = filepath.Join("testdata", tt.fixture)
			case tt.content != "":
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Load(path)
			if err == nil {
				t.Fatalf("Load = %+v, want an error", f)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.is)
			}
			if tt.is != os.ErrNotExist && !errors.Is(err, ErrCorrupt) {
				t.Errorf("err = %v, want it to wrap ErrCorrupt (exit 2)", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want one line", err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to mention %q", err, m)
				}
			}
		})
	}
}

// TestLoadSchema4Fixture loads a real schema 4 file (fenced under
// failover-lost-write, 4 clients): the fields of schema 2, the run's
// evidence and witnesses (schema 3) and its cost windows, command counter,
// machine noise and host statics (schema 4) are there, and the windows
// hold the run's grants.
func TestLoadSchema4Fixture(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "schema-v4.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	if f.Commit == "" || f.Seed != 1 || f.Repeat != 1 || f.Host.CPUModel == "" || f.Host.Kernel == "" || f.Host.MemoryMB == 0 {
		t.Errorf("file fields: commit %q seed %d repeat %d host %+v", f.Commit, f.Seed, f.Repeat, f.Host)
	}
	if r.Fairness <= 0 || r.Fairness > 1 || r.Errors.NotAcquired != r.Acquires["fail"] || r.AcquireLatencyMs.P999 < r.AcquireLatencyMs.P99 {
		t.Errorf("run fields: fairness %v errors %+v acquires %v latency %+v", r.Fairness, r.Errors, r.Acquires, r.AcquireLatencyMs)
	}
	e, w := r.Evidence, r.Witnesses
	if e.Holds != r.Grants || e.Acquires.OK != r.Acquires["ok"] || e.Clients != 4 || e.ChancesToOverlap == 0 || e.Faults != len(r.Faults) {
		t.Errorf("evidence %+v, grants %d, acquires %v, faults %d", e, r.Grants, r.Acquires, len(r.Faults))
	}
	if len(w.Exclusion) == 0 || w.Total.Exclusion != len(w.Exclusion) || len(w.Resource) == 0 || w.Resource[0].Write == nil || w.Resource[0].Read == nil ||
		len(w.Exclusion)+len(w.Resource) != r.Violations {
		t.Errorf("witnesses %+v, violations %d", w, r.Violations)
	}
	if len(r.Windows) != 6 || len(r.CommandCounter) != 6+1 || r.Noise == nil || r.Noise.Samples == 0 || len(r.Noise.RTTBefore) == 0 {
		t.Fatalf("schema 4 fields: %d windows, %d counter samples, noise %+v", len(r.Windows), len(r.CommandCounter), r.Noise)
	}
	grants := 0
	for _, w := range r.Windows {
		grants += w.Grants
	}
	if grants != r.Grants {
		t.Errorf("windows hold %d grants, run %d", grants, r.Grants)
	}
}
