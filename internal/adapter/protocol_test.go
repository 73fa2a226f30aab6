package adapter

import (
	"strings"
	"testing"
)

// TestHelloOf: a hello's checks, one bad field at a time, and the default
// policy its claims imply.
func TestHelloOf(t *testing.T) {
	good := func() Message {
		return Message{Type: TypeHello, Protocol: ProtocolVersion, Name: "x", Nodes: 1,
			Claims: &Claims{AtomicAcquire: true, TokenRelease: true, Validity: true}}
	}
	for _, tt := range []struct {
		name   string
		change func(*Message)
		want   string
	}{
		{"good", func(*Message) {}, ""},
		{"not a hello", func(m *Message) { m.Type = TypeOK }, `its first line is a "ok" message, not a hello`},
		{"protocol", func(m *Message) { m.Protocol = 0 }, "speaks protocol 0, this lockbench speaks 1 to 2"},
		{"protocol 3", func(m *Message) { m.Protocol = 3 }, "speaks protocol 3"},
		{"protocol 2", func(m *Message) { m.Protocol = 2 }, ""},
		{"v2 field in v1", func(m *Message) { m.Protocol, m.Cancel = 1, true }, "declares cancel, of protocol 2, but speaks protocol 1"},
		{"threads 0", func(m *Message) { m.Protocol, m.Threads = 2, new(int) }, "declares 0 threads"},
		{"shared lock alone", func(m *Message) { m.Protocol, m.SharedLock = 2, true }, "shared_lock without threads above 1"},
		{"ask without check", func(m *Message) { yes := true; m.Protocol, m.Policy = 2, &Policy{AskLock: &yes} }, "does not serve check"},
		{"no name", func(m *Message) { m.Name = "" }, "has no name"},
		{"no claims", func(m *Message) { m.Claims = nil }, "has no claims"},
		{"no nodes", func(m *Message) { m.Nodes = 0 }, "asks for 0 nodes"},
		{"too many nodes", func(m *Message) { m.Nodes = 10 }, "asks for 10 nodes"},
		{"quorum of one", func(m *Message) { m.Claims.Quorum = true }, "quorum on 1 node(s)"},
		{"nodes without quorum", func(m *Message) { m.Nodes = 5 }, "5 Redis nodes without claiming a quorum"},
		{"etcd members without quorum", func(m *Message) { m.Nodes, m.Server = 3, "etcd" }, ""},
		{"zookeeper members without quorum", func(m *Message) { m.Nodes, m.Server = 3, "zookeeper" }, ""},
		{"quorum on etcd", func(m *Message) { m.Nodes, m.Server, m.Claims.Quorum = 3, "etcd", true }, "claims a quorum on etcd"},
		{"extend without renewal", func(m *Message) { m.Extend = true }, "serves extend without claiming renewal"},
		{"server", func(m *Message) { m.Server = "mysql" }, `names server "mysql"`},
		{"crash point in the CS", func(m *Message) { m.CrashPoints = []string{"in-cs"} }, `crash point "in-cs"`},
		{"crash point twice", func(m *Message) { m.CrashPoints = []string{"a", "a"} }, `crash point "a" twice`},
	} {
		m := good()
		tt.change(&m)
		h, problem := helloOf(m)
		if tt.want == "" && problem != "" || !strings.Contains(problem, tt.want) {
			t.Errorf("%s: problem %q, want %q", tt.name, problem, tt.want)
		}
		if tt.want == "" && h.Policy != (UsagePolicy{CheckValidity: true}) {
			t.Errorf("%s: policy %+v, want check_validity (the validity claim's default)", tt.name, h.Policy)
		}
	}
}

// TestCheckReply: a reply's type, and the fields an ok acquire must carry
// for the hello's claims.
func TestCheckReply(t *testing.T) {
	v := 90.0
	for _, tt := range []struct {
		req    string
		reply  Message
		claims Claims
		want   string
	}{
		{TypeAcquire, Message{Type: TypeOK, Token: "t"}, Claims{}, ""},
		{TypeAcquire, Message{Type: TypeFail}, Claims{Fencing: true}, ""},
		{TypeRelease, Message{Type: TypeOK}, Claims{}, ""},
		{TypeAcquire, Message{Type: TypeInitOK}, Claims{}, `with a "init_ok" message`},
		{TypeAcquire, Message{Type: TypeOK}, Claims{}, "without a token"},
		{TypeAcquire, Message{Type: TypeOK, Token: "t"}, Claims{Fencing: true}, "without a positive fence"},
		{TypeAcquire, Message{Type: TypeOK, Token: "t", Fence: 3}, Claims{Fencing: true}, ""},
		{TypeAcquire, Message{Type: TypeOK, Token: "t"}, Claims{Validity: true}, "without validity_ms"},
		{TypeAcquire, Message{Type: TypeOK, Token: "t", ValidityMs: &v}, Claims{Validity: true}, ""},
		{TypeAcquire, Message{Type: TypeOK, Token: "t"}, Claims{Reentrant: true}, "without a count"},
	} {
		if got := CheckReply(tt.req, tt.reply, Hello{Claims: tt.claims, Protocol: 1}); tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s %+v with %+v: %q, want %q", tt.req, tt.reply, tt.claims, got, tt.want)
		}
	}
	// Protocol 2: reasons from the list, a check's answer, no negative
	// validity; a protocol-1 reply's extra fields are ignored.
	yes, neg := true, -1.0
	for _, tt := range []struct {
		req      string
		reply    Message
		protocol int
		want     string
	}{
		{TypeRelease, Message{Type: TypeFail, Reason: ReasonTaken}, 2, ""},
		{TypeRelease, Message{Type: TypeFail, Reason: "gone"}, 2, `reason "gone" (one of expired, taken, unavailable, cancelled, unknown)`},
		{TypeRelease, Message{Type: TypeFail, Reason: "gone"}, 1, ""},
		{TypeCheck, Message{Type: TypeOK, Valid: &yes}, 2, ""},
		{TypeCheck, Message{Type: TypeOK}, 2, "answered check (id 0) without valid"},
		{TypeCheck, Message{Type: TypeUnknown, Reason: ReasonUnavailable}, 2, ""},
		{TypeExtend, Message{Type: TypeOK, ValidityMs: &neg}, 2, "negative validity_ms"},
	} {
		if got := CheckReply(tt.req, tt.reply, Hello{Protocol: tt.protocol}); tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("protocol %d: %s %+v: %q, want %q", tt.protocol, tt.req, tt.reply, got, tt.want)
		}
	}
}
