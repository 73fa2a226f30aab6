// Package adapter runs a lock adapter: a child process that speaks
// lockbench's process protocol (docs/protocol.md), newline-delimited JSON
// on its stdin and stdout after Jepsen Maelstrom's node protocol, with its
// stderr kept as its log. Start launches one and reads its hello; a
// Process sends requests, matches replies by id, enforces deadlines,
// answers fault points and reports lost leases; Pause, Resume and Kill act
// on the process itself, so a client pause or crash is real.
//
// The package knows the protocol, not lock semantics: impl maps hellos to
// claims and replies to leases.
package adapter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ProtocolVersion is the newest protocol version this lockbench speaks.
// A hello may carry any version from MinProtocolVersion to it: version 2
// adds reasons, tokens of failed acquires, check requests, validity on
// extend, threads and cancel (docs/protocol.md); a version-1 adapter runs
// unchanged.
const ProtocolVersion = 2

// MinProtocolVersion is the oldest protocol version this lockbench speaks.
const MinProtocolVersion = 1

// MaxThreads bounds a hello's threads: the logical clients one adapter
// process may serve.
const MaxThreads = 1024

// Reasons an adapter may give on a fail or unknown reply (protocol 2), as
// history.Reasons: the lock's own account of why.
const (
	ReasonExpired     = "expired"
	ReasonTaken       = "taken"
	ReasonUnavailable = "unavailable"
	ReasonCancelled   = "cancelled"
	ReasonUnknown     = "unknown"
)

// Reasons lists the valid reasons in the order docs show them.
var Reasons = []string{ReasonExpired, ReasonTaken, ReasonUnavailable, ReasonCancelled, ReasonUnknown}

// Message types. Adapter to lockbench: TypeHello (first line), the replies
// TypeInitOK, TypeOK, TypeFail, TypeUnknown, and the events TypePoint and
// TypeLost. Lockbench to adapter: TypeInit, the requests TypeAcquire,
// TypeRelease, TypeExtend, TypePing, and the answers to a point: TypeContinue
// (go on) or TypeCrash (exit there at once, without cleanup). Protocol 2
// adds the requests TypeCheck (does the adapter still hold the lease?) and
// TypeCancel (abandon a request in flight).
const (
	TypeHello    = "hello"
	TypeInit     = "init"
	TypeInitOK   = "init_ok"
	TypeAcquire  = "acquire"
	TypeRelease  = "release"
	TypeExtend   = "extend"
	TypePing     = "ping"
	TypeOK       = "ok"
	TypeFail     = "fail"
	TypeUnknown  = "unknown"
	TypePoint    = "point"
	TypeContinue = "continue"
	TypeCrash    = "crash"
	TypeLost     = "lost"
	TypeCheck    = "check"
	TypeCancel   = "cancel"
)

// Claims are the guarantees an adapter declares in its hello, as
// impl.Claims (field names in snake case).
type Claims struct {
	AtomicAcquire bool `json:"atomic_acquire"`
	TokenRelease  bool `json:"token_release"`
	Renewal       bool `json:"renewal"`
	Reentrant     bool `json:"reentrant"`
	Quorum        bool `json:"quorum"`
	Fencing       bool `json:"fencing"`
	Validity      bool `json:"validity"`
}

// Policy is how lockbench's client uses a lease inside the critical
// section, as impl.Policy; a hello without one gets the default its claims
// imply (CheckValidity with Validity, HonourLost with Renewal, AskLock with
// check). AskLock (protocol 2) is nil when the policy leaves it out: it
// then defaults to the hello's check.
type Policy struct {
	CheckValidity bool  `json:"check_validity"`
	HonourLost    bool  `json:"honour_lost"`
	AskLock       *bool `json:"ask_lock,omitempty"`
}

// Message is one line of the protocol, in either direction. Which fields a
// type uses is listed in docs/protocol.md; the others are omitted. Fields
// lockbench does not know are ignored (an adapter may add its own, e.g.
// for its log).
type Message struct {
	Type string `json:"type"`
	// ID numbers a request (from 1, per process); InReplyTo is the ID a
	// reply, a point event or a continue answers.
	ID        int64 `json:"id,omitempty"`
	InReplyTo int64 `json:"in_reply_to,omitempty"`

	// hello
	Protocol    int      `json:"protocol,omitempty"`
	Name        string   `json:"name,omitempty"`
	Version     string   `json:"version,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Source      string   `json:"source,omitempty"`
	Claims      *Claims  `json:"claims,omitempty"`
	Policy      *Policy  `json:"policy,omitempty"`
	Nodes       int      `json:"nodes,omitempty"`
	Server      string   `json:"server,omitempty"`
	CrashPoints []string `json:"crash_points,omitempty"`
	// Extend says the adapter serves extend requests: lockbench then
	// renews the lease itself (every TTL/3) when the adapter claims renewal.
	Extend bool `json:"extend,omitempty"`
	// Protocol 2: Check says the adapter serves check requests; Threads
	// is how many logical clients one process serves (nil: 1); SharedLock
	// says those clients share one lock object; Cancel says the adapter
	// serves cancel requests.
	Check      bool `json:"check,omitempty"`
	Threads    *int `json:"threads,omitempty"`
	SharedLock bool `json:"shared_lock,omitempty"`
	Cancel     bool `json:"cancel,omitempty"`

	// init
	Endpoints []string `json:"endpoints,omitempty"`
	TTLMs     int64    `json:"ttl_ms,omitempty"`
	Owner     string   `json:"owner,omitempty"`

	// requests; Token also in ok replies and lost events (and, protocol 2,
	// in fail and unknown acquire replies: the token tried), Key in lost
	// events. Client (protocol 2) names the logical client (its init's
	// owner) a request is for, on every request after init and on lost
	// events; Request is the id a cancel abandons.
	Key        string  `json:"key,omitempty"`
	Token      string  `json:"token,omitempty"`
	DeadlineMs float64 `json:"deadline_ms,omitempty"`
	Client     string  `json:"client,omitempty"`
	Request    int64   `json:"request,omitempty"`

	// replies
	Fence      int64    `json:"fence,omitempty"`
	ValidityMs *float64 `json:"validity_ms,omitempty"`
	Count      int      `json:"count,omitempty"`
	Remaining  int      `json:"remaining,omitempty"`
	Error      string   `json:"error,omitempty"`
	// Reason (protocol 2) is a fail or unknown reply's stated reason, one
	// of Reasons; Valid is a check reply's answer.
	Reason string `json:"reason,omitempty"`
	Valid  *bool  `json:"valid,omitempty"`

	// point
	Point string `json:"point,omitempty"`
}

// Encode returns m as one protocol line, newline included.
func Encode(m Message) []byte {
	b, err := json.Marshal(m)
	if err != nil { // a Message has no field that fails to marshal
		panic(fmt.Sprintf("adapter: encode %s: %v", m.Type, err))
	}
	return append(b, '\n')
}

// UsagePolicy is a hello's policy resolved: its fields as declared, the
// defaults where it leaves them out.
type UsagePolicy struct {
	CheckValidity, HonourLost, AskLock bool
}

// Hello is an adapter's declaration: the first line it writes.
type Hello struct {
	Name, Version   string
	Summary, Source string
	Claims          Claims
	Policy          UsagePolicy
	// Nodes is how many servers the adapter needs (1, or 3 or more with
	// a quorum claim).
	Nodes int
	// Server is the kind of server ("redis", "etcd", "zookeeper"); "" is redis.
	Server string
	// CrashPoints name the places inside a call where the adapter stops
	// and asks lockbench whether to go on (a point event), so a crash can
	// be placed there.
	CrashPoints []string
	// Extend says the adapter serves extend requests.
	Extend bool
	// Protocol is the version the hello speaks (1 or 2).
	Protocol int
	// Check says the adapter serves check requests (protocol 2).
	Check bool
	// Threads is how many logical clients one process serves (1 unless
	// protocol 2 says more).
	Threads int
	// SharedLock says the logical clients of one process share one lock
	// object (protocol 2, with Threads > 1).
	SharedLock bool
	// Cancel says the adapter serves cancel requests (protocol 2).
	Cancel bool
}

// maxNodes bounds a hello's nodes: more servers than any topology lockbench starts.
const maxNodes = 9

// helloOf checks a hello message and returns its declaration, or the
// problem in words (for Error.Problem).
func helloOf(m Message) (Hello, string) {
	switch {
	case m.Type != TypeHello:
		return Hello{}, fmt.Sprintf("its first line is a %q message, not a hello", m.Type)
	case m.Protocol < MinProtocolVersion || m.Protocol > ProtocolVersion:
		return Hello{}, fmt.Sprintf("its hello speaks protocol %d, this lockbench speaks %d to %d", m.Protocol, MinProtocolVersion, ProtocolVersion)
	case m.Name == "":
		return Hello{}, "its hello has no name"
	case m.Claims == nil:
		return Hello{}, "its hello has no claims (give every claim, true or false)"
	case m.Nodes < 1 || m.Nodes > maxNodes:
		return Hello{}, fmt.Sprintf("its hello asks for %d nodes (1 to %d)", m.Nodes, maxNodes)
	case m.Extend && !m.Claims.Renewal:
		return Hello{}, "its hello serves extend without claiming renewal"
	}
	switch m.Server {
	case "", "redis", "etcd", "zookeeper":
	default:
		return Hello{}, fmt.Sprintf("its hello names server %q (redis, etcd or zookeeper)", m.Server)
	}
	if p := NodesProblem(m.Server, m.Nodes, m.Claims.Quorum); p != "" {
		return Hello{}, "its hello " + p
	}
	for _, p := range m.CrashPoints {
		if p == "" || p == "in-cs" || p == "before-write" {
			return Hello{}, fmt.Sprintf("its hello declares crash point %q (points inside a call only: the critical section is lockbench's)", p)
		}
	}
	if i := firstDuplicate(m.CrashPoints); i >= 0 {
		return Hello{}, fmt.Sprintf("its hello declares crash point %q twice", m.CrashPoints[i])
	}
	if problem := v2Fields(m); problem != "" {
		return Hello{}, problem
	}
	h := Hello{Name: m.Name, Version: m.Version, Summary: m.Summary, Source: m.Source, Claims: *m.Claims,
		Nodes: m.Nodes, Server: m.Server, CrashPoints: m.CrashPoints, Extend: m.Extend,
		Protocol: m.Protocol, Check: m.Check, Threads: 1, SharedLock: m.SharedLock, Cancel: m.Cancel}
	if m.Threads != nil {
		h.Threads = *m.Threads
	}
	h.Policy = UsagePolicy{CheckValidity: h.Claims.Validity, HonourLost: h.Claims.Renewal, AskLock: h.Check}
	if p := m.Policy; p != nil {
		h.Policy.CheckValidity, h.Policy.HonourLost = p.CheckValidity, p.HonourLost
		if p.AskLock != nil {
			h.Policy.AskLock = *p.AskLock
		}
	}
	return h, ""
}

// NodesProblem is the one rule on a lock's nodes and its quorum claim,
// for adapters' hellos and the built-in strategies alike (impl/strategies'
// TestBuiltinsKeepNodesRule), in words after "its hello", or "" when they
// agree. server is the kind of server ("", "redis", "etcd",
// "zookeeper"). On Redis, nodes are independent servers: more than one is
// a quorum lock (Redlock's majority of independent nodes), which needs at
// least 3 and must claim quorum; a lock without the claim runs on 1. On
// etcd and ZooKeeper, nodes are the members of one replicated store that
// commits on its own quorum (Raft, ZAB): they are not independent nodes a
// client counts votes on, so a lock there (etcd-mutex, zk-lock: 3
// members) does not claim quorum, whatever the member count.
func NodesProblem(server string, nodes int, quorum bool) string {
	switch {
	case server == "etcd" || server == "zookeeper":
		if quorum {
			return fmt.Sprintf("claims a quorum on %s: quorum is a claim about independent Redis nodes (a Redlock majority); the members of an %s cluster replicate one store that commits on its own quorum: claim quorum false and give the member count as nodes", server, server)
		}
	case quorum && nodes < 3:
		return fmt.Sprintf("claims a quorum on %d node(s): a quorum needs at least 3 independent nodes", nodes)
	case !quorum && nodes > 1:
		return fmt.Sprintf("asks for %d Redis nodes without claiming a quorum: a lock on several independent nodes counts a majority of them (claim quorum), else it runs on 1", nodes)
	}
	return ""
}

// v2Fields checks a hello's protocol-2 fields: none with protocol 1,
// threads from 1 to MaxThreads, shared_lock only with threads above 1.
func v2Fields(m Message) string {
	if m.Protocol < 2 {
		var set []string
		for _, f := range []struct {
			on   bool
			name string
		}{{m.Check, "check"}, {m.Threads != nil, "threads"}, {m.SharedLock, "shared_lock"}, {m.Cancel, "cancel"},
			{m.Policy != nil && m.Policy.AskLock != nil, "policy ask_lock"}} {
			if f.on {
				set = append(set, f.name)
			}
		}
		if len(set) > 0 {
			return fmt.Sprintf("its hello declares %s, of protocol 2, but speaks protocol %d: declare \"protocol\": 2", strings.Join(set, ", "), m.Protocol)
		}
		return ""
	}
	switch {
	case m.Threads != nil && (*m.Threads < 1 || *m.Threads > MaxThreads):
		return fmt.Sprintf("its hello declares %d threads (1 to %d logical clients per process)", *m.Threads, MaxThreads)
	case m.Policy != nil && m.Policy.AskLock != nil && *m.Policy.AskLock && !m.Check:
		return "its hello's policy asks the lock before each write (ask_lock) but the hello does not serve check: declare \"check\": true"
	case m.SharedLock && (m.Threads == nil || *m.Threads < 2):
		return "its hello declares shared_lock without threads above 1 (a lock object shared by the logical clients of one process needs \"threads\": 2 or more)"
	}
	return ""
}

// firstDuplicate returns the index of the first string that repeats an
// earlier one, or -1.
func firstDuplicate(s []string) int {
	for i := range s {
		if slices.Contains(s[:i], s[i]) {
			return i
		}
	}
	return -1
}

// ValidReason reports whether r is one of Reasons.
func ValidReason(r string) bool { return slices.Contains(Reasons, r) }

// CheckReply returns the problem with a reply to a request of type req,
// in words, or "": a reply must be ok, fail or unknown; an ok acquire
// needs a token, and the fields its claims promise (a positive fence with
// Fencing, validity_ms with Validity, a count of 1 or more with Reentrant).
// Protocol 2 (h.Protocol): a reason must be one of Reasons; an ok check
// needs valid; validity_ms may not be negative.
func CheckReply(req string, m Message, h Hello) string {
	c := h.Claims
	switch m.Type {
	case TypeOK, TypeFail, TypeUnknown:
	default:
		return fmt.Sprintf("answered %s (id %d) with a %q message (ok, fail or unknown)", req, m.InReplyTo, m.Type)
	}
	if h.Protocol >= 2 {
		switch {
		case m.Reason != "" && !ValidReason(m.Reason):
			return fmt.Sprintf("answered %s (id %d) with reason %q (one of %s)", req, m.InReplyTo, m.Reason, strings.Join(Reasons, ", "))
		case m.ValidityMs != nil && *m.ValidityMs < 0:
			return fmt.Sprintf("answered %s (id %d) with a negative validity_ms %v", req, m.InReplyTo, *m.ValidityMs)
		case req == TypeCheck && m.Type == TypeOK && m.Valid == nil:
			return fmt.Sprintf("answered check (id %d) without valid (true: it still holds the lease, false: not)", m.InReplyTo)
		}
	}
	if m.Type != TypeOK || req != TypeAcquire {
		return ""
	}
	switch {
	case m.Token == "":
		return fmt.Sprintf("granted acquire (id %d) without a token", m.InReplyTo)
	case c.Fencing && m.Fence <= 0:
		return fmt.Sprintf("claims fencing but granted acquire (id %d) without a positive fence", m.InReplyTo)
	case c.Validity && m.ValidityMs == nil:
		return fmt.Sprintf("claims validity but granted acquire (id %d) without validity_ms", m.InReplyTo)
	case c.Reentrant && m.Count < 1:
		return fmt.Sprintf("claims reentrancy but granted acquire (id %d) without a count", m.InReplyTo)
	}
	return ""
}
