package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/errs"
)

// SharedKeysFlag is the lockbench flag that sets External.SharedKeys.
const SharedKeysFlag = "--shared-keys"

// StaleKeys describes keys found under a key prefix on a server (KeysUnder).
type StaleKeys struct {
	// Addr is the server, Prefix the key prefix scanned for.
	Addr, Prefix string
	// N is the number of matching keys found; AtLeast is true when the
	// scan stopped at its first batch with a match, so there may be more.
	N       int
	AtLeast bool
	// Example is one of the keys.
	Example string
}

// scanCount is the COUNT hint of KeysUnder's and DeleteKeysUnder's SCANs.
const scanCount = 1000

// globEscape escapes the glob characters of a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// keyClient is a one-connection client with no retries for the key scans
// (as cluster's own, for its Redis Cluster seeds).
func keyClient(addr string, sec security.Security) *redis.Client {
	return redis.NewClient(sec.Apply(&redis.Options{Addr: addr, DialTimeout: cluster.ReadyTimeout, ReadTimeout: cluster.ReadyTimeout, WriteTimeout: cluster.ReadyTimeout,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 1, DisableIdentity: true, Protocol: 2, ContextTimeoutEnabled: true}))
}

// RunID returns the run_id of the server at addr (INFO server): the same
// for every address that reaches the same server process. A server that
// does not answer gives an error wrapping errs.ErrEnvironment that names addr.
// ctx bounds the call.
func RunID(ctx context.Context, addr string, sec security.Security) (string, error) {
	if err := sec.ProbeTLS(ctx, addr); err != nil {
		return "", err
	}
	rc := keyClient(addr, sec)
	defer rc.Close()
	info, err := rc.Info(ctx, "server").Result()
	if err != nil {
		return "", sec.Unreachable(addr, "INFO server", err)
	}
	if sec.Password != "" && sec.Username == "" {
		// HELLO's AUTH, which the client above logged in with, is
		// accepted by a server with no password at all (its default
		// user is nopass), but AUTH password, which redis-py and the
		// older clients send, is refused there: a password given to
		// such a server is a mistake to name now, before the run.
		if err := rc.Do(ctx, "AUTH", sec.Password).Err(); err != nil {
			return "", sec.Unreachable(addr, "AUTH", err)
		}
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v, nil
		}
	}
	return "", nil
}

// KeysUnder scans the server at addr for keys under prefix (SCAN 0 MATCH
// prefix* COUNT 1000, glob characters in prefix escaped) and stops at the
// first batch with a match: nil when the server holds none. A server that
// does not answer gives an error wrapping errs.ErrEnvironment that names addr.
// ctx bounds the scan.
func KeysUnder(ctx context.Context, addr, prefix string, sec security.Security) (*StaleKeys, error) {
	rc := keyClient(addr, sec)
	defer rc.Close()
	var cursor uint64
	for {
		keys, next, err := rc.Scan(ctx, cursor, globEscape(prefix)+"*", scanCount).Result()
		if err != nil {
			return nil, sec.Unreachable(addr, fmt.Sprintf("SCAN (the check for keys under %q)", prefix), err)
		}
		if len(keys) > 0 {
			slices.Sort(keys)
			return &StaleKeys{Addr: addr, Prefix: prefix, N: len(keys), AtLeast: next != 0, Example: keys[0]}, nil
		}
		if cursor = next; cursor == 0 {
			return nil, nil
		}
	}
}

// DeleteKeysUnder deletes every key under prefix on the server at addr
// (SCAN MATCH prefix* and UNLINK) and returns how many it deleted. A
// replica's READONLY refusal ends it without an error (the primary's
// deletions replicate). ctx bounds it.
func DeleteKeysUnder(ctx context.Context, addr, prefix string, sec security.Security) (int, error) {
	rc := keyClient(addr, sec)
	defer rc.Close()
	var cursor uint64
	n := 0
	for {
		keys, next, err := rc.Scan(ctx, cursor, globEscape(prefix)+"*", scanCount).Result()
		if err != nil {
			return n, fmt.Errorf("cluster: %s: SCAN for keys under %q: %w", addr, prefix, err)
		}
		if len(keys) > 0 {
			d, err := rc.Unlink(ctx, keys...).Result()
			if err != nil {
				if strings.HasPrefix(err.Error(), "READONLY") {
					return n, nil
				}
				return n, fmt.Errorf("cluster: %s: UNLINK keys under %q: %w", addr, prefix, err)
			}
			n += int(d)
		}
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

// ProbeFaultCommands checks, before a run on the external backend, that
// the server at addr accepts the Redis commands through which the features
// need are injected there: cluster.FeaturePause sends DEBUG SLEEP 0 (a no-op),
// which Redis 7 refuses unless enable-debug-command is yes (or local and
// lockbench runs on the server's host). A refusal gives an error wrapping
// errs.ErrEnvironment that names the server and the fix; other features need no
// probe.
func ProbeFaultCommands(ctx context.Context, addr string, need []cluster.Feature, sec security.Security) error {
	if !slices.Contains(need, cluster.FeaturePause) {
		return nil
	}
	rc := keyClient(addr, sec)
	defer rc.Close()
	if err := rc.Do(ctx, "DEBUG", "SLEEP", "0").Err(); err != nil {
		return fmt.Errorf("%w: cluster: external server %s refuses DEBUG SLEEP, through which the scenario pauses it (%s): set enable-debug-command yes (or local, when lockbench runs on that host) in its config and restart it, or choose a scenario without pause",
			errs.ErrEnvironment, addr, sec.Redact(errs.FirstLine(err)))
	}
	return nil
}
