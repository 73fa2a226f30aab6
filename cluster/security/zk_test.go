package security

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/internal/errs"
)

// TestZKIdentity: without a password the znodes are world:anyone and no
// login is sent; with one, the digest identity is --redis-user (default
// lockbench), the ACL holds its salted hash and never the password, and
// a refused login is explained without quoting it.
func TestZKIdentity(t *testing.T) {
	if acl := (Security{}).ZKACL(); len(acl) != 1 || acl[0].Scheme != "world" {
		t.Errorf("plain ZKACL = %+v, want world:anyone", acl)
	}
	if _, _, ok := (Security{}).ZKAuth(); ok {
		t.Errorf("plain ZKAuth sends a login")
	}
	const pw = "pl4nted-zk-unit"
	for _, tc := range []struct{ user, want string }{{"", ZKDefaultUser}, {"app", "app"}} {
		s := Security{Username: tc.user, Password: pw}
		scheme, cred, ok := s.ZKAuth()
		if !ok || scheme != "digest" || string(cred) != tc.want+":"+pw {
			t.Errorf("ZKAuth user %q = %s %q %v", tc.user, scheme, cred, ok)
		}
		acl := s.ZKACL()
		if len(acl) != 1 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, tc.want+":") || strings.Contains(acl[0].ID, pw) || acl[0].Perms != zk.PermAll {
			t.Errorf("ZKACL user %q = %+v", tc.user, acl)
		}
		err := s.ExplainZK("zk1:2281", errors.Join(errors.New("login "+pw), zk.ErrAuthFailed))
		if !errors.Is(err, errs.ErrEnvironment) || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "zk1:2281") {
			t.Errorf("ExplainZK = %v", err)
		}
	}
}
