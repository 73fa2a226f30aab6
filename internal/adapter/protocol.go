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
)

// ProtocolVersion is the protocol version this lockbench speaks; a hello
// must carry it.
const ProtocolVersion = 1

// Message types. Adapter to lockbench: TypeHello (first line), the replies
// TypeInitOK, TypeOK, TypeFail, TypeUnknown, and the events TypePoint and
// TypeLost. Lockbench to adapter: TypeInit, the requests TypeAcquire,
// TypeRelease, TypeExtend, TypePing, and the answers to a point: TypeContinue
// (go on) or TypeCrash (exit there at once, without cleanup).
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
// imply (CheckValidity with Validity, HonourLost with Renewal).
type Policy struct {
	CheckValidity bool `json:"check_validity"`
	HonourLost    bool `json:"honour_lost"`
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

	// init
	Endpoints []string `json:"endpoints,omitempty"`
	TTLMs     int64    `json:"ttl_ms,omitempty"`
	Owner     string   `json:"owner,omitempty"`

	// requests; Token also in ok replies and lost events, Key in lost events
	Key        string  `json:"key,omitempty"`
	Token      string  `json:"token,omitempty"`
	DeadlineMs float64 `json:"deadline_ms,omitempty"`

	// replies
	Fence      int64    `json:"fence,omitempty"`
	ValidityMs *float64 `json:"validity_ms,omitempty"`
	Count      int      `json:"count,omitempty"`
	Remaining  int      `json:"remaining,omitempty"`
	Error      string   `json:"error,omitempty"`

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

// Hello is an adapter's declaration: the first line it writes.
type Hello struct {
	Name, Version   string
	Summary, Source string
	Claims          Claims
	Policy          Policy
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
}

// maxNodes bounds a hello's nodes: more servers than any topology lockbench starts.
const maxNodes = 9

// helloOf checks a hello message and returns its declaration, or the
// problem in words (for Error.Problem).
func helloOf(m Message) (Hello, string) {
	switch {
	case m.Type != TypeHello:
		return Hello{}, fmt.Sprintf("its first line is a %q message, not a hello", m.Type)
	case m.Protocol != ProtocolVersion:
		return Hello{}, fmt.Sprintf("its hello speaks protocol %d, this lockbench speaks %d", m.Protocol, ProtocolVersion)
	case m.Name == "":
		return Hello{}, "its hello has no name"
	case m.Claims == nil:
		return Hello{}, "its hello has no claims (give every claim, true or false)"
	case m.Nodes < 1 || m.Nodes > maxNodes:
		return Hello{}, fmt.Sprintf("its hello asks for %d nodes (1 to %d)", m.Nodes, maxNodes)
	case m.Claims.Quorum && m.Nodes < 3:
		return Hello{}, fmt.Sprintf("its hello claims a quorum on %d node(s): a quorum needs at least 3 independent nodes", m.Nodes)
	case !m.Claims.Quorum && m.Nodes > 1:
		return Hello{}, fmt.Sprintf("its hello asks for %d nodes without claiming a quorum", m.Nodes)
	case m.Extend && !m.Claims.Renewal:
		return Hello{}, "its hello serves extend without claiming renewal"
	}
	switch m.Server {
	case "", "redis", "etcd", "zookeeper":
	default:
		return Hello{}, fmt.Sprintf("its hello names server %q (redis, etcd or zookeeper)", m.Server)
	}
	for _, p := range m.CrashPoints {
		if p == "" || p == "in-cs" || p == "before-write" {
			return Hello{}, fmt.Sprintf("its hello declares crash point %q (points inside a call only: the critical section is lockbench's)", p)
		}
	}
	if i := firstDuplicate(m.CrashPoints); i >= 0 {
		return Hello{}, fmt.Sprintf("its hello declares crash point %q twice", m.CrashPoints[i])
	}
	h := Hello{Name: m.Name, Version: m.Version, Summary: m.Summary, Source: m.Source, Claims: *m.Claims,
		Nodes: m.Nodes, Server: m.Server, CrashPoints: m.CrashPoints, Extend: m.Extend}
	if m.Policy != nil {
		h.Policy = *m.Policy
	} else {
		h.Policy = Policy{CheckValidity: h.Claims.Validity, HonourLost: h.Claims.Renewal}
	}
	return h, ""
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

// CheckReply returns the problem with a reply to a request of type req,
// in words, or "": a reply must be ok, fail or unknown; an ok acquire
// needs a token, and the fields its claims promise (a positive fence with
// Fencing, validity_ms with Validity, a count of 1 or more with Reentrant).
func CheckReply(req string, m Message, c Claims) string {
	switch m.Type {
	case TypeOK, TypeFail, TypeUnknown:
	default:
		return fmt.Sprintf("answered %s (id %d) with a %q message (ok, fail or unknown)", req, m.InReplyTo, m.Type)
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
