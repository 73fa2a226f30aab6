// Package keystate reads the state of a lock key on a Redis node through
// a connection of its own (Key, KeyObs) and watches a key's keyspace
// events (WatchKeyEvents): the evidence a fault and a scenario's nemesis
// record of what they did.
package keystate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
)

// KeyObs is the state of a lock key on one Redis node as the nemesis read
// it, through a connection of its own (never a client's link), as
// evidence of what a fault did: who held the key, with which TTL.
type KeyObs struct {
	// Node names the node ("n1").
	Node string
	// Type is the key's Redis type: "none" (absent), "string" (SET k
	// token), "hash" (reentrant: one field per owner, its count), or ""
	// when it could not be read (Err).
	Type string
	// Value is a string key's value (the owner token).
	Value string
	// Fields are a hash key's fields (owner token → count).
	Fields map[string]string
	// PTTL is the key's remaining TTL; -1ns: no TTL, -2ns: absent (go-redis).
	PTTL time.Duration
	// Err is why the key could not be read.
	Err error
}

// observeTimeout bounds one Key: it may run while a client waits
// (a lost reply's read at the drop), so it is short.
const observeTimeout = 150 * time.Millisecond

// Key reads key on the Redis server at addr (node is its name for
// the evidence) in one round trip: TYPE, PTTL, GET and HGETALL pipelined
// (the read that does not fit the type fails and is ignored).
func Key(ctx context.Context, node, addr, key string, sec security.Security) KeyObs {
	ctx, cancel := context.WithTimeout(ctx, observeTimeout)
	defer cancel()
	c := redis.NewClient(sec.Apply(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, DialerRetries: 1, Protocol: 2,
		DisableIdentity: true, DialTimeout: observeTimeout, ReadTimeout: observeTimeout, WriteTimeout: observeTimeout}))
	defer c.Close()
	o := KeyObs{Node: node}
	var typ *redis.StatusCmd
	var pttl *redis.DurationCmd
	var get *redis.StringCmd
	var hall *redis.MapStringStringCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		typ = p.Type(ctx, key)
		pttl = p.PTTL(ctx, key)
		get = p.Get(ctx, key)
		hall = p.HGetAll(ctx, key)
		return nil
	})
	if typ == nil || typ.Err() != nil {
		o.Err = fmt.Errorf("read %s on %s: %w", key, node, err)
		return o
	}
	o.Type, o.PTTL = typ.Val(), pttl.Val()
	switch o.Type {
	case "string":
		o.Value = get.Val()
	case "hash":
		o.Fields = hall.Val()
	}
	return o
}

// present reports whether the key exists.
func (o KeyObs) Present() bool { return o.Err == nil && o.Type != "none" && o.Type != "" }

// holds reports whether the key is held by token: a string key whose
// value is token, or a hash key with a field token.
func (o KeyObs) Holds(token string) bool {
	if token == "" {
		return false
	}
	switch o.Type {
	case "string":
		return o.Value == token
	case "hash":
		_, ok := o.Fields[token]
		return ok
	}
	return false
}

// count is a hash key's count for token (0 if none or not a hash).
func (o KeyObs) Count(token string) int {
	var n int
	fmt.Sscan(o.Fields[token], &n)
	return n
}

// String is the evidence text, e.g. "absent", "c2-1:9f:7 (PTTL 187ms)",
// "c2-1:9f:7 (no TTL)", "hash {c2-1:9f: 2} (PTTL 190ms)", "unreadable
// (...)".
func (o KeyObs) String() string {
	if o.Err != nil {
		return fmt.Sprintf("unreadable (%v)", o.Err)
	}
	var v string
	switch o.Type {
	case "none":
		return "absent"
	case "string":
		v = o.Value
	case "hash":
		var f []string
		for _, k := range slices.Sorted(maps.Keys(o.Fields)) {
			f = append(f, k+": "+o.Fields[k])
		}
		v = "hash {" + strings.Join(f, ", ") + "}"
	default:
		v = o.Type
	}
	if o.PTTL < 0 {
		return v + " (no TTL)"
	}
	return fmt.Sprintf("%s (PTTL %v)", v, o.PTTL.Round(time.Millisecond))
}

// KeyEvents collects the keyspace notifications of one key on one Redis
// node (notify-keyspace-events "KA" while it watches): each event's name
// ("set", "hincrby", "expire", "del", "expired") and when it came.
type KeyEvents struct {
	c  *redis.Client
	ps *redis.PubSub

	mu   sync.Mutex
	evs  []keyEvent
	done chan struct{}
}

// keyEvent is one keyspace notification.
type keyEvent struct {
	at   time.Time
	name string
}

// watchTimeout bounds the set-up of a watch (a dial on a loaded machine
// takes hundreds of ms at times).
const watchTimeout = 2 * time.Second

// ErrWatch marks an Inject that could not watch the key: nothing was
// stopped, and the strike is missed rather than the run failed.
var ErrWatch = errors.New("cannot watch the key")

// WatchKeyEvents turns keyspace notifications on at addr and subscribes
// to key's, through a client of its own with sec's AUTH and TLS (the
// cluster's Security); it returns once the subscription is confirmed.
func WatchKeyEvents(ctx context.Context, node, addr, key string, sec security.Security) (*KeyEvents, error) {
	ctx, cancel := context.WithTimeout(ctx, watchTimeout)
	defer cancel()
	c := redis.NewClient(sec.Apply(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 2, Protocol: 2, DisableIdentity: true,
		DialTimeout: watchTimeout, ReadTimeout: watchTimeout, WriteTimeout: watchTimeout}))
	if err := c.ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("watch %s on %s: CONFIG SET notify-keyspace-events: %w", key, node, err)
	}
	ps := c.Subscribe(ctx, "__keyspace@0__:"+key)
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		c.Close()
		return nil, fmt.Errorf("watch %s on %s: SUBSCRIBE: %w", key, node, err)
	}
	w := &KeyEvents{c: c, ps: ps, done: make(chan struct{})}
	ch := ps.Channel(redis.WithChannelHealthCheckInterval(time.Hour))
	go func() {
		defer close(w.done)
		for m := range ch {
			w.mu.Lock()
			w.evs = append(w.evs, keyEvent{at: time.Now(), name: m.Payload})
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// since returns the names of the events that came at or after t.
func (w *KeyEvents) Since(t time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.evs {
		if !e.at.Before(t) {
			out = append(out, e.name)
		}
	}
	return out
}

// close unsubscribes, turns keyspace notifications off and closes the
// client.
func (w *KeyEvents) Close() {
	_ = w.ps.Close()
	<-w.done
	ctx, cancel := context.WithTimeout(context.Background(), watchTimeout)
	defer cancel()
	_ = w.c.ConfigSet(ctx, "notify-keyspace-events", "").Err()
	_ = w.c.Close()
}

// CloseWatches closes every watch of ws (KeyEvents.Close).
func CloseWatches(ws []*KeyEvents) {
	for _, w := range ws {
		w.Close()
	}
}

// TakesKey reports whether a keyspace event sets a lock key: "set" (SET,
// SETNX, a script's SET), "hincrby" or "hset" (a hash lock's owner
// field).
func TakesKey(event string) bool {
	switch event {
	case "set", "hincrby", "hset", "hsetnx":
		return true
	}
	return false
}
