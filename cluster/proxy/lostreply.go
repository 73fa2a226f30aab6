package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// LostReply is a lost reply armed on one Proxy (Proxy.ArmLostReply): the
// next command a client sends through the proxy reaches the server, which
// runs it, and the first reply that comes back after it is dropped and
// its connection closed, so the client sees its connection end (EOF)
// after the command took effect: the classic indeterminate outcome
// (Jepsen's "indeterminate" operations; Kleppmann, "Designing
// Data-Intensive Applications", ch. 8). The commands a client sends to set
// a connection up (HELLO, AUTH, SELECT, CLIENT, READONLY, PING, SCRIPT) go
// through untouched and do not count as the command, and a -NOSCRIPT
// error reply (an EVALSHA of a script the server does not have: it ran
// nothing) is passed through with the command it answers, so the
// client's next command (the EVAL or EVALSHA after loading its script)
// is the one whose reply is lost. It fires once; Disarm removes it.
//
// It is built from two toxics (toxiproxy, embedded as a library) added
// to the proxy while it is armed: one on the upstream stream notes the
// command going up, one on the downstream stream drops the first reply
// after it. The two streams of one connection share nothing toxiproxy
// exposes, so "the reply after the command" is the first chunk of reply
// data on any of the proxy's connections after the command went up: arm
// it when the client has no other call in flight on that link (right
// before its call: workload.PointBeforeAcquire and the like).
type LostReply struct {
	p *Proxy

	mu      sync.Mutex
	sent    bool      // the command went up
	cmd     string    // its name, e.g. "SET", "EVALSHA"
	sentAt  time.Time // when it went up
	firedAt time.Time // when its reply was dropped
	dropped bool      // its reply was dropped (fired closes after onDrop)
	reply   string    // the first line of the reply dropped
	fired   chan struct{}
	removed bool
	// onDrop runs when the reply is dropped, before the connection closes.
	onDrop func(*LostReply)
}

// Names and type of the lost-reply toxics.
const (
	toxicLostReply     = "lockbench_lost_reply"
	toxicLostReplyUp   = "lost_reply_upstream"
	toxicLostReplyDown = "lost_reply_downstream"
)

// setupCommands are the commands a client sends to set a connection up
// (go-redis, redis-py, Jedis, Lettuce) or to load a script: they pass a
// LostReply untouched.
var setupCommands = []string{"HELLO", "AUTH", "SELECT", "CLIENT", "READONLY", "PING", "SCRIPT"}

func init() {
	// toxiproxy's registry of toxic types is process-wide by its design
	// (its built-in toxics register the same way).
	toxics.Register(toxicLostReply, new(lostReplyToxic))
}

// lostReplyToxic is one direction of a LostReply. toxiproxy builds it
// from JSON (Up); lr is set right after it is added.
type lostReplyToxic struct {
	Up bool `json:"up"`
	lr atomic.Pointer[LostReply]
}

// Pipe forwards every chunk, telling the LostReply of each: upstream
// before forwarding (so no reply can come first), downstream instead of
// forwarding when the LostReply drops it (then the connection closes).
func (t *lostReplyToxic) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			lr := t.lr.Load()
			if t.Up {
				if lr != nil {
					lr.up(c.Data)
				}
			} else if lr != nil && lr.down(c.Data) {
				if lr.onDrop != nil {
					lr.onDrop(lr)
				}
				close(lr.fired)
				stub.Close() // the client's connection closes: EOF
				return
			}
			stub.Output <- c
		}
	}
}

// ArmLostReply arms a LostReply on the proxy (see LostReply). onDrop, if
// not nil, runs with it when the reply is dropped (Command and Reply are
// set), before the client's connection
// closes: the server has run the command and the client cannot have
// acted on its outcome yet, so a read of the server's state there (on a
// connection of its own) shows the command's effect alone. It delays the
// client's error by its own duration: keep it short. Only one LostReply
// may be armed at a time: ArmLostReply fails while another is (Disarm it
// first), and on a closed proxy. A cut proxy can be armed: it fires after
// Restore.
func (p *Proxy) ArmLostReply(onDrop func(*LostReply)) (*LostReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	if p.lost != nil {
		return nil, fmt.Errorf("cluster: proxy %s: a lost reply is armed already", p.name)
	}
	lr := &LostReply{p: p, fired: make(chan struct{}), onDrop: onDrop}
	var added []string
	for _, up := range []bool{true, false} {
		name, dir := toxicLostReplyDown, "downstream"
		if up {
			name, dir = toxicLostReplyUp, "upstream"
		}
		spec := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{"up":%v}}`, name, toxicLostReply, dir, up)
		w, err := p.p.Toxics.AddToxicJson(strings.NewReader(spec))
		if err != nil {
			rerr := p.removeToxics(added...)
			return nil, errors.Join(fmt.Errorf("cluster: proxy %s: add lost reply: %w", p.name, err), rerr)
		}
		added = append(added, name)
		t, ok := w.Toxic.(*lostReplyToxic)
		if !ok {
			return nil, fmt.Errorf("cluster: proxy %s: lost-reply toxic of type %T", p.name, w.Toxic)
		}
		// Set before the caller's client sends anything: the toxic
		// forwards untouched until then.
		t.lr.Store(lr)
	}
	p.lost = lr
	return lr, nil
}

// up is told of every chunk going up: the first that does not start with
// a set-up command is the command.
func (l *LostReply) up(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sent || l.dropped {
		return
	}
	name := firstCommand(b)
	for _, s := range setupCommands {
		if name == s {
			return
		}
	}
	l.sent, l.cmd, l.sentAt = true, name, time.Now()
}

// down is told of every chunk coming down and reports whether to drop it:
// the first after the command went up, unless it is a -NOSCRIPT error.
func (l *LostReply) down(b []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.sent || l.dropped {
		return false
	}
	if bytes.HasPrefix(b, []byte("-NOSCRIPT")) {
		l.sent, l.cmd = false, ""
		return false
	}
	l.firedAt, l.dropped = time.Now(), true
	line := b
	if i := bytes.Index(line, []byte("\r\n")); i >= 0 {
		line = line[:i]
	}
	if len(line) > maxReplyText {
		line = line[:maxReplyText]
	}
	l.reply = string(line)
	return true
}

func (l *LostReply) isFired() bool {
	select {
	case <-l.fired:
		return true
	default:
		return false
	}
}

// Fired is closed once a reply was dropped, after onDrop returned and
// before the client's connection closes.
func (l *LostReply) Fired() <-chan struct{} { return l.fired }

// Command returns the name of the command whose reply was dropped (or
// that went up and waits for its reply; "" if none went up yet), e.g.
// "SET", "EVALSHA".
func (l *LostReply) Command() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cmd
}

// maxReplyText bounds the reply text a LostReply keeps.
const maxReplyText = 64

// Reply returns the first line of the reply dropped (at most 64 bytes),
// e.g. "+OK", ":1", "_" (RESP3 null), "$-1"; "" before the drop. It says
// what the command did: the client never saw it.
func (l *LostReply) Reply() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reply
}

// Times returns when the command went up and when its reply was dropped
// (zero when not yet).
func (l *LostReply) Times() (sent, dropped time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sentAt, l.firedAt
}

// Wait waits until the reply is dropped or ctx ends; it reports whether
// it was dropped.
func (l *LostReply) Wait(ctx context.Context) bool {
	select {
	case <-l.fired:
		return true
	case <-ctx.Done():
		return l.isFired()
	}
}

// Disarm removes the lost reply from its proxy (a reply not dropped yet
// then flows normally). It is safe to call twice and after the proxy
// closed.
func (l *LostReply) Disarm() error {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.removed {
		return nil
	}
	l.removed = true
	if p.lost == l {
		p.lost = nil
	}
	if p.closed {
		return nil
	}
	return p.removeToxics(toxicLostReplyUp, toxicLostReplyDown)
}

// DisarmLostReply disarms the proxy's armed LostReply, if any.
func (p *Proxy) DisarmLostReply() error {
	p.mu.Lock()
	l := p.lost
	p.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Disarm()
}

// firstCommand returns the upper-cased name of the first command in a
// chunk of client data: a RESP array of bulk strings ("*3\r\n$3\r\nSET
// ...") or an inline command ("PING\r\n"); "" if the chunk starts with
// neither.
func firstCommand(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if b[0] != '*' {
		end := bytes.IndexAny(b, " \r\n")
		if end < 0 {
			end = len(b)
		}
		return strings.ToUpper(string(b[:end]))
	}
	// *N\r\n$L\r\nNAME\r\n
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 || i+2 >= len(b) || b[i+2] != '$' {
		return ""
	}
	rest := b[i+2:]
	j := bytes.Index(rest, []byte("\r\n"))
	if j < 0 {
		return ""
	}
	rest = rest[j+2:]
	k := bytes.Index(rest, []byte("\r\n"))
	if k < 0 {
		k = len(rest)
	}
	return strings.ToUpper(string(rest[:k]))
}
