package results

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/history"
)

// schemaPaths lists the JSON paths of t's fields: "runs[].verdict.exclusion"
// for nested structs, "[]" for slices of structs; maps and other values are
// leaves. A struct type met a second time (RunConfig as config.workload and
// runs[].config, Run as runs[] and sweep[]) is a leaf there: it is
// documented once, where it first appears.
// historyPkg is the history record's package: an operation a witness
// points to is a leaf, documented in docs/history-format.md.
var historyPkg = reflect.TypeOf(history.Operation{}).PkgPath()

func schemaPaths(t reflect.Type, prefix string, seen map[reflect.Type]bool, out *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().PkgPath() != historyPkg {
			ft = ft.Elem() // an optional object: documented like one that is always there
		}
		suffix := ""
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			ft, suffix = ft.Elem(), "[]"
		}
		*out = append(*out, path+suffix)
		if ft.Kind() == reflect.Struct && !seen[ft] {
			seen[ft] = true
			schemaPaths(ft, path+suffix+".", seen, out)
		}
	}
}

// schemaDoc documents every field of results.json.
const schemaDoc = "../docs/results-format.md"

// docSchemaPaths returns the backticked paths in the first column of the
// tables in docs/results-format.md's results.json section.
func docSchemaPaths(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(schemaDoc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "<!-- results-json")
	end := strings.Index(s, "<!-- /results-json -->")
	if start < 0 || end < start {
		t.Fatal(schemaDoc + " has no <!-- results-json … --> … <!-- /results-json --> section")
	}
	var paths []string
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(s[start:end], "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 3 || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cols[1], -1) {
			paths = append(paths, m[1])
		}
	}
	return paths
}

// TestDocsDocumentSchema fails when a results.json field is added to the
// structs but not to docs/results-format.md, or when that page documents a
// field the structs no longer have.
func TestDocsDocumentSchema(t *testing.T) {
	var fields []string
	schemaPaths(reflect.TypeOf(File{}), "", map[reflect.Type]bool{reflect.TypeOf(File{}): true}, &fields)
	documented := docSchemaPaths(t)
	for _, f := range fields {
		if !slices.Contains(documented, f) {
			t.Errorf("results.json field %s is not documented in %s: add a row | `%s` | unit | meaning |", f, schemaDoc, f)
		}
	}
	for _, d := range documented {
		if !slices.Contains(fields, d) {
			t.Errorf("%s documents %s, which results.json does not have: remove or rename the row", schemaDoc, d)
		}
	}
	if !strings.Contains(strings.Join(documented, " "), "schema_version") {
		t.Error(schemaDoc + " names no schema_version")
	}
}

// TestUnknownVerdicts: a verdict value lockbench never writes is named,
// one line per check; the values it writes, and "", are not.
func TestUnknownVerdicts(t *testing.T) {
	for _, tt := range []struct {
		v    Verdict
		want int
	}{
		{Verdict{Exclusion: "ok", Resource: "violated", Liveness: "inconclusive", Fencing: "skipped"}, 0},
		{Verdict{}, 0},
		{Verdict{Exclusion: "banana", Resource: "ok", Liveness: "ok"}, 1},
		{Verdict{Exclusion: "OK", Resource: "held", Liveness: "ok", Reentrancy: "x"}, 3},
	} {
		if got := (Run{Verdict: tt.v}).UnknownVerdicts(); len(got) != tt.want {
			t.Errorf("%+v: UnknownVerdicts = %q, want %d lines", tt.v, got, tt.want)
		}
	}
}
