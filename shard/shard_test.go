package shard

import (
	"strings"
	"testing"
)

// TestParse: --shard takes I/N with 1 ≤ I ≤ N ≤ MaxShards; anything
// else is a one-line usage error.
func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"1/4", Shard{1, 4}, ""},
		{" 4/4 ", Shard{4, 4}, ""},
		{"1/1", Shard{1, 1}, ""},
		{"0/4", Shard{}, "want I from 1 to N"},
		{"5/4", Shard{}, "want I from 1 to N"},
		{"1/0", Shard{}, "want N from 1"},
		{"1/65", Shard{}, "want N from 1"},
		{"2", Shard{}, "want I/N"},
		{"a/b", Shard{}, "want I/N"},
	} {
		got, err := Parse(tt.in)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("Parse(%q): error %v, want one line with %q", tt.in, err, tt.err)
		}
	}
}
