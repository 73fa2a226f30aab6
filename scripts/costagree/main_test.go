package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// TestWrite checks which differences count: counts beyond the limit or
// measured on one side only, and a strategy missing from the second table;
// time figures never.
func TestWrite(t *testing.T) {
	row := func(st string, rtts, client, handoff float64) results.CostRow {
		return results.CostRow{Strategy: st, RTTsPerHold: stats.Estimate{Median: rtts, N: 6},
			ClientCmdsPerGrant: client, HandoffP50Ms: stats.Estimate{Median: handoff, N: 6}}
	}
	tests := []struct {
		name     string
		old, new []results.CostRow
		want     int
		mentions []string
	}{
		{"equal counts, time doubled", []results.CostRow{row("token-lua", 2.5, 2, 1)}, []results.CostRow{row("token-lua", 2.6, 2, 2)}, 0,
			[]string{"| token-lua | rtts/hold | 2.50 | 2.60 | +4.0% | ok |", "| token-lua | handoff p50 ms | 1.00 | 2.00 | +100.0% | not judged (time) |"}},
		{"rtts beyond 10%", []results.CostRow{row("redlock", 4, 10, 1)}, []results.CostRow{row("redlock", 4.5, 10, 1)}, 1,
			[]string{"| redlock | rtts/hold | 4.00 | 4.50 | +12.5% | DIFFERS |"}},
		{"commands on one side only", []results.CostRow{row("redsync", 3, 11, 1)}, []results.CostRow{row("redsync", 3, 0, 1)}, 1,
			[]string{"| redsync | client cmds/grant | 11.0 | 0 |  | DIFFERS |"}},
		{"strategy missing", []results.CostRow{row("zk-lock", 9, 0, 1)}, nil, 1, []string{"| zk-lock | all | | missing | | DIFFERS |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if got := write(&b, tt.old, tt.new, 0.1); got != tt.want {
				t.Errorf("write = %d differences, want %d:\n%s", got, tt.want, b.String())
			}
			for _, m := range tt.mentions {
				if !strings.Contains(b.String(), m) {
					t.Errorf("output lacks %q:\n%s", m, b.String())
				}
			}
		})
	}
}

// TestParseShare checks the -within forms.
func TestParseShare(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		ok   bool
	}{{"10%", 0.1, true}, {"0.1", 0.1, true}, {"150%", 0, false}, {"0", 0, false}, {"x", 0, false}} {
		got, err := parseShare(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseShare(%q) = %v, %v", tt.in, got, err)
		}
	}
}
