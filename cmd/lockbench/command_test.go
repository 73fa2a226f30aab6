package main

import (
	"testing"

	"github.com/lockbench/lockbench/bench"
)

func TestBenchCommandLine(t *testing.T) {
	ci, _ := bench.LookupProfile("ci")
	if got, want := benchCommand(ci, 3, 2, "out"), "lockbench bench --profile ci --seed 3 --repeat 2 --out out"; got != want {
		t.Errorf("benchCommand(ci) = %q, want %q", got, want)
	}
	narrowed := ci
	narrowed.Strategies = []string{"token-lua", "fenced"}
	if got, want := benchCommand(narrowed, 1, 1, "o"), "lockbench bench --profile ci --seed 1 --repeat 1 --strategies token-lua,fenced --out o"; got != want {
		t.Errorf("benchCommand(narrowed) = %q, want %q", got, want)
	}
}
