// Package redislog silences go-redis's own log lines.
//
// go-redis logs every failed dial ("connection pool: failed to dial after 1
// attempts ...") to stderr. Under lockbench's faults those failures are the
// point of the run and every failed call is already in the history, so the
// lines are noise; in `go test` output they buried the one line that said
// which test failed.
package redislog

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// Quiet replaces go-redis's package logger with one that drops every line.
// go-redis keeps one logger per process, so call it once from main or
// TestMain, before any client is made.
func Quiet() { redis.SetLogger(discard{}) }

// RunTests is a package's TestMain body: Quiet, then the tests; it exits
// with their status.
func RunTests(m *testing.M) {
	Quiet()
	os.Exit(m.Run())
}
