package link

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/proxy"
	"github.com/lockbench/lockbench/cluster/security"
)

// LostReply arms a lost reply (proxy.LostReply) on one client's links
// to some nodes: the client's next command on each link reaches its node
// and runs there, then its reply is dropped and the connection closed, so
// the client sees an error for a command that took effect. At the drop,
// before the client can act on it, the key is read on that node through a
// connection of its own (keystate.Key): the evidence of what the command
// did. Inject arms the links (evidence: "armed on client 2's links to
// n1"); Heal disarms them and says, per node, whether a reply was lost
// and what the key held then.
type LostReply struct {
	Links  *Links
	Client int
	Nodes  []int    // node indexes in link order
	Names  []string // their names, for evidence
	Addrs  []string // their own addresses, for the reads at the drop
	Sec    security.Security
	Key    string

	mu    sync.Mutex
	armed []*proxy.LostReply
	at    []keystate.KeyObs // per node: the key at the drop (Type "" until then)
	cmd   []string          // per node: the command whose reply was lost
	reply []string          // per node: the reply lost (its first line)
	when  []time.Time       // per node: when the reply was dropped
}

// Name is the primitive's name, "lost-reply" (Fault.Name).
func (*LostReply) Name() string { return "lost-reply" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*LostReply) Needs() []cluster.Feature { return nil }

// Inject arms a lost reply on every link, which must exist. r.mu is
// never held while a link is armed or disarmed: a drop in progress
// (onDrop) takes it, and disarming waits for the drop.
func (r *LostReply) Inject(context.Context) (string, error) {
	if r.Links == nil || len(r.Nodes) == 0 {
		return "", errors.New("needs per-link proxies (Setup.Proxies) and a node")
	}
	n := len(r.Nodes)
	r.mu.Lock()
	r.at, r.cmd, r.reply, r.when = make([]keystate.KeyObs, n), make([]string, n), make([]string, n), make([]time.Time, n)
	r.mu.Unlock()
	var armed []*proxy.LostReply
	for i, node := range r.Nodes {
		p := r.Links.Link(r.Client, node)
		if p == nil {
			return "", errors.Join(fmt.Errorf("client %d has no proxy to node %d", r.Client, node+1), disarmAll(armed))
		}
		lr, err := p.ArmLostReply(r.onDrop(i))
		if err != nil {
			return "", errors.Join(err, disarmAll(armed))
		}
		armed = append(armed, lr)
	}
	r.mu.Lock()
	r.armed = armed
	r.mu.Unlock()
	return fmt.Sprintf("armed on client %d's links to %s", r.Client, strings.Join(r.Names, ",")), nil
}

// onDrop returns the read of the key on node i, run at its drop (in the
// proxy, before the client's connection closes).
func (r *LostReply) onDrop(i int) func(*proxy.LostReply) {
	return func(lr *proxy.LostReply) {
		o := keystate.Key(context.Background(), r.Names[i], r.Addrs[i], r.Key, r.Sec)
		r.mu.Lock()
		r.at[i], r.when[i] = o, time.Now()
		r.cmd[i], r.reply[i] = lr.Command(), lr.Reply()
		r.mu.Unlock()
	}
}

// disarmAll disarms the links.
func disarmAll(armed []*proxy.LostReply) error {
	var errs []error
	for _, lr := range armed {
		errs = append(errs, lr.Disarm())
	}
	return errors.Join(errs...)
}

// firedAll reports whether every armed link has dropped its reply.
func (r *LostReply) firedAll() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, lr := range r.armed {
		select {
		case <-lr.Fired():
		default:
			return false
		}
	}
	return len(r.armed) > 0
}

// wait waits until every armed link dropped its reply, stop closes, or
// ctx ends.
func (r *LostReply) Wait(ctx context.Context, stop <-chan struct{}) {
	r.mu.Lock()
	armed := slicesClone(r.armed)
	r.mu.Unlock()
	for _, lr := range armed {
		select {
		case <-lr.Fired():
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// drops returns, per node (in r.nodes order), whether its reply was
// dropped, the key at the drop, the command and its reply.
func (r *LostReply) Drops() (dropped []bool, at []keystate.KeyObs, cmd, reply []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, lr := range r.armed {
		select {
		case <-lr.Fired(): // onDrop has run: at[i] is set
			dropped = append(dropped, true)
		default:
			dropped = append(dropped, false)
		}
		at = append(at, r.at[i])
		cmd = append(cmd, r.cmd[i])
		reply = append(reply, r.reply[i])
	}
	return dropped, at, cmd, reply
}

// ReplyDone reports whether a reply (its first line, RESP2 or RESP3)
// says a lock command did what it was asked: "+OK", a positive integer
// (SETNX 1, a script's 1 or hold count, PEXPIRE 1), a non-nil bulk string
// or array, or true; not an error, a null, 0 or a negative integer (a
// script's "not held"), an empty array or false. Lock commands and the
// scripts of the strategies lockbench knows answer so; an unknown reply
// counts as not done, so a strike it answers is not called landed.
func ReplyDone(reply string) bool {
	if reply == "" {
		return false
	}
	rest := reply[1:]
	switch reply[0] {
	case '+':
		return true
	case ':':
		var n int64
		_, err := fmt.Sscan(rest, &n)
		return err == nil && n > 0
	case '$', '*', '%', '~':
		return rest != "-1" && rest != "0"
	case '#':
		return rest == "t"
	}
	return false
}

// Heal disarms every link.
func (r *LostReply) Heal(context.Context) (string, error) {
	r.mu.Lock()
	armed := slicesClone(r.armed)
	r.mu.Unlock()
	return "", disarmAll(armed)
}

// SlowReply makes one node answer one client late: the client's proxy
// link to the node delays every reply by d (proxy.Proxy.SetReplyLatency)
// and nothing the client sends, so a command reaches the node and runs at
// once while the client learns of it d later, as from a node that answers
// slowly (a GC, a slow disk, a congested link back). Evidence: "replies of
// n1 to client 3 delayed 150ms". Heal removes the delay; a reply held
// back then goes on at once.
type SlowReply struct {
	Links    *Links
	Client   int
	Node     int    // node index in link order
	NodeName string // its name, for evidence
	D        time.Duration
}

// Name is the primitive's name, "slow-reply" (Fault.Name).
func (*SlowReply) Name() string { return "slow-reply" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*SlowReply) Needs() []cluster.Feature { return nil }

// Inject delays the replies on the client's link to the node, which must
// exist.
func (s *SlowReply) Inject(context.Context) (string, error) {
	p := s.Links.Link(s.Client, s.Node)
	if p == nil {
		return "", fmt.Errorf("client %d has no proxy to node %d (Setup.Proxies)", s.Client, s.Node+1)
	}
	if err := p.SetReplyLatency(s.D); err != nil {
		return "", err
	}
	return fmt.Sprintf("replies of %s to client %d delayed %v", s.NodeName, s.Client, s.D), nil
}

// Heal removes the delay.
func (s *SlowReply) Heal(context.Context) (string, error) {
	p := s.Links.Link(s.Client, s.Node)
	if p == nil {
		return "", nil
	}
	return "", p.SetReplyLatency(0)
}
