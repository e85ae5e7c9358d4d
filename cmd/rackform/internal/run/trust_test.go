package run

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

// ReadTrusted compares the expected SHA-256 before decoding, and decides
// who vouches for a plan: trusted keys, the reviewed hash, -allow-unsigned,
// a person at a terminal (a warning), or nobody (a usage error).
func TestReadTrusted(t *testing.T) {
	dir := t.TempDir()
	notPlan := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notPlan, []byte("not a plan at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := ReadTrusted(notPlan, Trust{Expect: true, ExpectSHA256: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "it is not the plan that was reviewed") {
		t.Fatalf("a file that is not the reviewed one: %v (want the hash's refusal, before any decoding)", err)
	}

	b, err := plan.Encode(&plan.Plan{RackformVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "p.plan")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sha := plan.SHA256(b)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	for _, tc := range []struct {
		name    string
		trust   Trust
		warning bool
		err     string
	}{
		{"reviewed hash", Trust{Expect: true, ExpectSHA256: "sha256:" + sha}, false, ""},
		{"allow unsigned", Trust{AllowUnsigned: true}, false, ""},
		{"at a terminal", Trust{Interactive: true}, true, ""},
		{"nothing vouches", Trust{}, false, "Outside a terminal, apply needs one of"},
		{"trusted keys, unsigned plan", Trust{Keys: []ed25519.PublicKey{key.Public().(ed25519.PublicKey)}, AllowUnsigned: true}, false, "is not signed, and RACKFORM_PLAN_TRUSTED_KEYS is set"},
	} {
		f, p, warning, err := ReadTrusted(file, tc.trust)
		switch {
		case tc.err == "" && (err != nil || f.SHA256 != sha || p == nil):
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		case (warning != "") != tc.warning:
			t.Errorf("%s: warning %q", tc.name, warning)
		}
	}
	var unverified *UnverifiedError
	if _, _, _, err := ReadTrusted(file, Trust{}); !errors.As(err, &unverified) {
		t.Errorf("nothing vouches: %T, want *UnverifiedError (a usage error)", err)
	}
}
