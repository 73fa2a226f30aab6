// Package history defines the recorded history of a lockbench run: one
// Operation per client call (lock operations, protected-resource operations,
// crashes, nemesis windows), stamped by one monotonic Clock, and its
// JSON Lines file format.
//
// A history file is JSON Lines. Line 1 is a Header carrying the schema
// version and the run's configuration; every further line is one Operation.
// Times are nanoseconds since the run started (relative, monotonic), never
// wall-clock times, so histories from other languages can be checked with
// `lockbench check` as long as they use one clock for every operation.
package history

import (
	"encoding/json"
	"sync/atomic"
	"time"
)

// SchemaVersion is the version of the history file format written by this
// package. Readers reject files with a different version.
const SchemaVersion = 1

// Kind names what an Operation did.
type Kind string

// Operation kinds. Lock kinds come from a Strategy; resource kinds from the
// protected resource; Crash, Lost and Nemesis from the harness.
const (
	Acquire Kind = "acquire" // try to take the lock on Key
	Release Kind = "release" // give the lock back
	Extend  Kind = "extend"  // renewal of a held lease (watchdog)
	Lost    Kind = "lost"    // the strategy signalled that the lease was lost (renewal failed)
	Read    Kind = "read"    // read of the protected resource; Value is what was read
	Write   Kind = "write"   // write of the protected resource; Prev is the value the CS read, Value the new value
	Crash   Kind = "crash"   // the client died at a named point (Note) while it believed it held Key
	Probe   Kind = "probe"   // post-run liveness probe by the harness: Value is the key's PTTL in ms before probing (-1: no TTL, -2: no key); ok = acquired within TTL + 1 s
	Nemesis Kind = "nemesis" // a fault window: Invoke is its start, Complete its end, Note what was done
	// Check: the usage policy asked the lock, right before a write, whether
	// it still holds the lease (impl.Checker, a protocol-2 adapter's check
	// request). Result ok: Value 1 = the lock said valid, 0 = not valid;
	// fail or info: the lock could not say (the client stopped, as for 0).
	Check Kind = "check"
)

// Observe is the kind of lockbench's own read of a lock key's state on one
// server, through a direct connection (never through a scenario's proxy, so
// a cut link does not blind it): Client -1, Stream -1; Node names the node
// ("n1".., as per-node calls do), Key the key; Token is the owner token
// found ("" when the key is absent: for a hash, the reentrant owner field),
// Value the key's PTTL in ms (-1: no TTL, -2: no key) and Count the
// reentrant count (the hash field's value; 0 for a string key). Result ok:
// the node answered; info: it did not (Error says why), and the other
// fields are empty. The reads of one key on every node taken together (a
// round) share Invoke, so a checker can tell which token held a majority of
// the nodes at once. A read on a replica carries Note ObservedOnReplica
// (first, before any other note): a replica copies its primary's keys and
// holds no lock of its own until it is promoted. Observations feed the
// orphan, failure-reason, lost and reentrant-count checks; a history from
// elsewhere may have none.
const Observe Kind = "observe"

// ObservedOnReplica begins the Note of an Observe operation read on a
// replica.
const ObservedOnReplica = "replica"

// Reasons a lock states for a failed or unknown acquire, release or
// extend (Operation.Reason): its own account of why, which a checker may
// hold against the history.
const (
	// ReasonExpired: the lease's key was gone (its TTL ran out, or a
	// server lost it): nobody holds it.
	ReasonExpired = "expired"
	// ReasonTaken: another owner holds the key.
	ReasonTaken = "taken"
	// ReasonUnavailable: the lock's servers could not be reached (or no
	// quorum of them answered).
	ReasonUnavailable = "unavailable"
	// ReasonCancelled: the call was cancelled in flight (a nemesis's
	// cancel fault) before its outcome was known.
	ReasonCancelled = "cancelled"
	// ReasonUnknown: the lock gives no reason it can vouch for.
	ReasonUnknown = "unknown"
)

// Reasons lists the valid reasons, in the order docs show them.
var Reasons = []string{ReasonExpired, ReasonTaken, ReasonUnavailable, ReasonCancelled, ReasonUnknown}

// ValidReason reports whether r is one of Reasons ("" is not: no reason is
// the omitted field).
func ValidReason(r string) bool {
	switch r {
	case ReasonExpired, ReasonTaken, ReasonUnavailable, ReasonCancelled, ReasonUnknown:
		return true
	}
	return false
}

// Result is an operation's outcome in Jepsen's terms.
type Result string

// Results.
const (
	OK   Result = "ok"   // the operation took effect (for writes: accepted by the resource)
	Fail Result = "fail" // the operation certainly did not take effect (lock held by another, write rejected by fencing)
	Info Result = "info" // outcome unknown (timeout, connection error): it may or may not have taken effect
)

// Operation is one recorded call. Zero-valued optional fields are omitted from
// the JSON form.
type Operation struct {
	// Client is the logical client (0..clients-1); -1 for the harness and the nemesis.
	Client int `json:"client"`
	// Stream is porcupine's ClientId: a client gets a new stream after an
	// operation with an unknown outcome, because its next operation may run
	// concurrently with the unknown one.
	Stream int `json:"stream"`
	// Kind says what was done.
	Kind Kind `json:"kind"`
	// Key is the lock key (also set on resource operations: the resource guarded by Key).
	Key string `json:"key,omitempty"`
	// Node names the Redis node for per-node calls (e.g. "n3"); empty for whole-lock calls.
	Node string `json:"node,omitempty"`
	// Hold links the operations of one hold: the id of the outermost acquire
	// (unique in a history, starting at 1). 0 for operations outside a hold.
	Hold int64 `json:"hold,omitempty"`
	// Depth is the reentrancy depth of a lock operation within its hold: 1 for
	// the outermost acquire/release, 2.. for nested ones. 0 for non-lock operations.
	Depth int `json:"depth,omitempty"`
	// Count is the reentrancy count Redis reported: after an acquire, the new
	// count; after a release, the remaining count. 0 for non-reentrant strategies.
	Count int `json:"count,omitempty"`
	// Token is the owner token the lock value carries. On a fail or info
	// acquire it is the token the lock wrote or tried, when the lock says
	// it (a key left behind with it is that client's orphan); such an
	// acquire is never a hold.
	Token string `json:"token,omitempty"`
	// Fence is the fencing token (0 if the strategy has none).
	Fence int64 `json:"fence,omitempty"`
	// Invoke is when the call started, in ns since the run started.
	Invoke int64 `json:"invoke_ns"`
	// Complete is when the call returned, in ns since the run started. For
	// Info results the effect may land later; checkers treat it as unbounded.
	Complete int64 `json:"complete_ns"`
	// Result is ok, fail or info.
	Result Result `json:"result"`
	// Value: for Read, the value read; for Write, the new value; for Probe,
	// PTTL in ms; for Check, 1 when the lock said the lease is valid, else 0.
	Value int64 `json:"value,omitempty"`
	// Prev: for Write, the value the critical section read before writing.
	Prev int64 `json:"prev,omitempty"`
	// ValidUntil is the lease's validity deadline in ns since run start (0: none tracked).
	ValidUntil int64 `json:"valid_until_ns,omitempty"`
	// Error is the error text of a fail or info result.
	Error string `json:"error,omitempty"`
	// Reason is the lock's own stated reason for a fail or info result of
	// an acquire, release or extend: one of Reasons; "" when it states none.
	Reason string `json:"reason,omitempty"`
	// RoundTrips is, for an acquire or release call, the round trips it
	// made to the servers, counted on the client's own connections (a
	// go-redis hook, etcd's gRPC interceptor, ZooKeeper's request writes):
	// a request sent while none of the client's others is in flight starts
	// one, so a quorum lock's parallel commands to its nodes share one and
	// a retry loop's sequential commands count each. 0: not counted
	// (adapter locks, whose clients lockbench does not hold).
	RoundTrips int `json:"round_trips,omitempty"`
	// Note is free text: the crash point, the fault injected.
	Note string `json:"note,omitempty"`
	// Landing says, for a Nemesis operation, whether the condition a
	// violation needs was met while the fault was in force (see Landing);
	// "" for other kinds and when the nemesis cannot tell.
	Landing Landing `json:"landing,omitempty"`
}

// Landing says whether, while a fault was in force, the condition a
// violation needs was met. It is the nemesis's own account; the checker's
// evidence counts read it.
type Landing string

// Landings of a Nemesis operation.
const (
	// Landed: the condition a violation needs was met while the fault was
	// in force (e.g. another client was granted the key of the struck
	// holder, or a clock jump found another client granted).
	Landed Landing = "landed"
	// Missed: the fault was injected but that condition was not met (no
	// holder was struck, or nobody else was granted the key meanwhile).
	// For a pair expected to break this is no evidence either way; for a
	// pair expected to hold, refusing the other clients' attempts is what
	// the lock promises, so the evidence there is the chances to overlap,
	// not the landing.
	Missed Landing = "missed"
)

// Header is line 1 of a history file: the schema version and what the
// checkers need to know about the run.
type Header struct {
	SchemaVersion int    `json:"schema_version"`
	Strategy      string `json:"strategy"`
	Scenario      string `json:"scenario"`
	Seed          int64  `json:"seed"`
	Clients       int    `json:"clients"`
	Keys          int    `json:"keys"`
	// TTLMs is the lock TTL in milliseconds.
	TTLMs int64 `json:"ttl_ms"`
	// Fencing is the protected resource's fencing mode: "off", "writes" or "all".
	Fencing string `json:"fencing"`
	// Reentrant is true when the strategy nests acquires (Count is meaningful).
	Reentrant bool `json:"reentrant,omitempty"`
	// Nodes is the number of primaries the lock spans: 1 for a single-node
	// lock (with or without replicas), N for a quorum over N nodes; a lock
	// is held when a majority of them hold its token. 0: not recorded
	// (a majority is then counted over the primaries each observation
	// pass read).
	Nodes int `json:"nodes,omitempty"`
	// Renewal is true when the strategy claims renewal: it keeps its
	// lease alive while held and signals Lost when it can no longer (the
	// lost check holds it to that).
	Renewal bool `json:"renewal,omitempty"`
	// OpTimeoutMs is each lock call's budget in milliseconds (the
	// workload's op timeout: the deadline of the call's context); 0 when
	// not recorded. The evidence hints compare unknown outcomes' durations
	// with it: answered well inside it (the lock's own answer), at it (the
	// budget decided) or past it (the lock overran its deadline).
	OpTimeoutMs int64 `json:"op_timeout_ms,omitempty"`
	// Started is the wall-clock start of the run (RFC 3339), for humans only.
	Started string `json:"started,omitempty"`
	// NotGated, when set, says why the verdict table does not gate the run
	// (a custom usage policy, fencing mode or library settings; see
	// verdicts.NotGated): lockbench check then reports the run at risk, as
	// lockbench run did. Its JSON name is "ungated", the name histories of
	// this schema version carry; it stays so that they remain readable
	// without a schema change.
	NotGated string `json:"ungated,omitempty"`
	// Schedule is the fault schedule the run played instead of a named
	// scenario (lockbench run --schedule, lockbench hunt), as compact JSON
	// (the schedule file's format, docs/hunt.md); Scenario is then
	// "schedule:NAME". lockbench check judges such a history by the
	// schedule's expectations, as the run did. Absent for a named scenario.
	Schedule json.RawMessage `json:"schedule,omitempty"`
	// EndLine says the writer ends the file with an end line
	// ({"end_operations":N}); a file that says so and lacks it was cut
	// short (its writer was killed) and is refused. Set by Create.
	EndLine bool `json:"end_line,omitempty"`
	// Interrupted is not part of the header line: Parse sets it from the
	// end line, which says so when the run was interrupted (Ctrl-C or SIGTERM) before
	// its planned end. The history is whole up to the interruption.
	Interrupted bool `json:"-"`
	// Incomplete is not part of the header line either: Parse sets it from
	// the end line, which says why when the run stopped before its planned
	// end for a failure (e.g. an exec adapter that broke the protocol).
	// The history is whole up to the failure.
	Incomplete string `json:"-"`
	// Clock is the run's clock measured against its lock server's clock
	// before the run (lockbench on the external backend), so that
	// histories of several client hosts can be put on one timeline
	// (crosshost.Check); nil when not measured.
	Clock *ClockSync `json:"clock,omitempty"`
	// ClockAfter is not part of the header line: Parse sets it from the
	// end line, which carries the same measurement taken after the run.
	ClockAfter *ClockSync `json:"-"`
	// ClockSkewNs is a clock skew injected for testing (lockbench run
	// --clock-skew; NewSkewedClock), in ns: every time in this history
	// (operations, fault windows, the clock measurements' own readings)
	// is this much later than the time since the run started, as on a
	// host whose clock runs ahead. Checks within the history are
	// unaffected (they compare its times with each other); a cross-host
	// check places it by Clock, which was measured with the same skewed
	// clock. 0: none injected.
	ClockSkewNs int64 `json:"clock_skew_ns,omitempty"`
	// ClockError says why a run that measures its clock against the
	// server (lockbench on the external backend) has no Clock: the
	// measurement's error, e.g. an ACL that refuses TIME. "" otherwise.
	ClockError string `json:"clock_error,omitempty"`
	// SharedKeys is true when other client hosts' lockbench processes
	// used the same keys at the same time (lockbench on the external
	// backend with --shared-keys): the servers' state may hold tokens
	// no operation of this history wrote, so the checks that read it
	// (orphans, reasons) do not take such a token for this history's.
	SharedKeys bool `json:"shared_keys,omitempty"`
	// MaxStallNs is not part of the header line: Parse sets it from the
	// end line, which carries the largest delay the harness itself added
	// inside a hold during the run (ns; workload.Stats.MaxOverrun: the
	// machine ran the harness late, not a fault). A run judges its own
	// verdicts by it; a cross-host check (lockbench check H1 H2) of
	// several hosts' histories has only this. 0: none, or not recorded.
	MaxStallNs int64 `json:"-"`
}

// ClockSync is one measurement of a history's clock against a server's:
// the best of several exchanges (the one with the shortest round trip)
// of the server's own time (Redis TIME) between two readings of the
// run's clock. Server time = history time + OffsetNs, to within
// HalfRTTNs.
type ClockSync struct {
	// Server names the server and the command, e.g. "redis 10.0.0.5:6379 TIME".
	Server string `json:"server"`
	// OffsetNs is the server's time (ns since the Unix epoch) minus the
	// history's time (ns since the run started) at the midpoint of the
	// exchange.
	OffsetNs int64 `json:"offset_ns"`
	// HalfRTTNs is half the exchange's round trip, in ns: the server read
	// its clock somewhere inside it, so OffsetNs is right to within it
	// (Redis TIME has microsecond resolution: 1000 ns more).
	HalfRTTNs int64 `json:"half_rtt_ns"`
}

// endLine is the last line of a history whose header sets EndLine: how
// many operations the file holds, and whether the run was interrupted
// before its planned end.
type endLine struct {
	EndOperations int64 `json:"end_operations"`
	Interrupted   bool  `json:"interrupted,omitempty"`
	// Incomplete says why the run stopped early for a failure; "" if it did not.
	Incomplete string `json:"incomplete,omitempty"`
	// Clock is the clock measurement taken after the run (Header.ClockAfter).
	Clock *ClockSync `json:"clock,omitempty"`
	// MaxStallNs is the harness's own largest delay inside a hold
	// (Header.MaxStallNs).
	MaxStallNs int64 `json:"max_stall_ns,omitempty"`
}

// Clock stamps operations with nanoseconds since the run started, from Go's
// monotonic clock. One Clock serves every client of a run. It is safe for
// concurrent use.
type Clock struct {
	start time.Time
	// skew is added to every reading (NewSkewedClock); 0 for NewClock.
	skew time.Duration
}

// NewClock returns a Clock whose zero is now.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// NewSkewedClock returns a Clock that reads skew more than NewClock would:
// every time it stamps is skew later than the time since now, as on a
// host whose clock runs skew ahead (lockbench run --clock-skew, for
// testing the cross-host check: a merge by wall clock, Header.Started
// plus the history's times, misplaces such a history by skew, while its
// clock measured against the server, Header.Clock, places it right).
// Differences between its readings are those of NewClock's.
func NewSkewedClock(skew time.Duration) *Clock { return &Clock{start: time.Now(), skew: skew} }

// Now returns nanoseconds since the clock's start, plus its skew.
func (c *Clock) Now() int64 { return int64(time.Since(c.start) + c.skew) }

// At converts an absolute time to nanoseconds since the clock's start,
// plus its skew, as Now would have read it then; a zero time gives 0.
func (c *Clock) At(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return int64(t.Sub(c.start) + c.skew)
}

// Start returns the instant the clock started, as an absolute time (the
// machine's); Now read Skew then.
func (c *Clock) Start() time.Time { return c.start }

// Skew returns the clock's injected skew (NewSkewedClock); 0 for NewClock.
func (c *Clock) Skew() time.Duration { return c.skew }

// IDs hands out unique hold ids and porcupine stream ids for one run. It is
// safe for concurrent use.
type IDs struct {
	hold, stream atomic.Int64
}

// NextHold returns a new hold id, starting at 1.
func (i *IDs) NextHold() int64 { return i.hold.Add(1) }

// NextStream returns a new stream id, starting at 0.
func (i *IDs) NextStream() int { return int(i.stream.Add(1) - 1) }
