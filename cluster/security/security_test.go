package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedSecret is the password the tests look for in every printed form
// and error (as cluster's security tests do on real servers).
const plantedSecret = "pl4nted-S3CRET-7f3a"

// TestSecurityNeverPrinted: String, %#v, %+v on a struct holding it (cluster.Options) and JSON redact
// the password; Environ carries it only under its variable.
func TestSecurityNeverPrinted(t *testing.T) {
	s := Security{Username: "app", Password: plantedSecret, TLS: true, CAFile: "ca.pem"}
	o := struct { // as a struct holding it (cluster.Options) prints it
		Addr     string
		Security Security
	}{"127.0.0.1:6379", s}
	for _, out := range []string{s.String(), fmt.Sprintf("%v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%+v", o)} {
		if strings.Contains(out, plantedSecret) {
			t.Errorf("printed form holds the password: %s", out)
		}
	}
	b, err := s.MarshalJSON()
	if err != nil || strings.Contains(string(b), plantedSecret) {
		t.Errorf("MarshalJSON = %s, %v", b, err)
	}
	env := strings.Join(s.Environ(), "\n")
	if !strings.Contains(env, EnvPassword+"="+plantedSecret) || !strings.Contains(env, EnvCAFile+"=ca.pem") {
		t.Errorf("Environ = %q", env)
	}
}

// TestReadPassword: from a variable or a file, never both; errors name
// the source, not the value.
func TestReadPassword(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pw")
	os.WriteFile(f, []byte(plantedSecret+"\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	t.Setenv("LB_TEST_PW", plantedSecret)
	for _, tc := range []struct {
		env, file, want, err string
	}{
		{"LB_TEST_PW", "", plantedSecret, ""},
		{"", f, plantedSecret, ""},
		{"", "", "", ""},
		{"LB_TEST_PW", f, "", "not both"},
		{"LB_TEST_UNSET", "", "", "LB_TEST_UNSET"},
		// The password typed where its variable's name goes: refused
		// without repeating it.
		{"s3cret pass!", "", "", "not the password"},
		{"", empty, "", "first line is empty"},
		{"", filepath.Join(dir, "missing"), "", "--password-file"},
	} {
		got, err := ReadPassword(tc.env, tc.file)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadPassword(%q, %q) = %q, %v; want %q, error with %q", tc.env, tc.file, got, err, tc.want, tc.err)
		}
		if err != nil && (strings.Contains(err.Error(), plantedSecret) || strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("error quotes the password: %v", err)
		}
	}
}
