package command

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

func keyPair(t *testing.T, seed byte) (priv, pub []byte, fp string) {
	t.Helper()
	k := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	priv, err := plan.MarshalPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err = plan.MarshalPublicKey(k.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub, plan.Fingerprint(k.Public().(ed25519.PublicKey))
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTrustedKeys(t *testing.T) {
	dir := t.TempDir()
	priv, pub1, fp1 := keyPair(t, 1)
	_, pub2, fp2 := keyPair(t, 2)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.pub", pub1), write("b.pub", pub2)
	both := write("both.pub", append(append([]byte{}, pub1...), pub2...))
	privFile := write("key", priv)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, value string
		want        []string
		err         string
	}{
		{"unset", "", nil, ""},
		{"inline PEM", string(pub1), []string{fp1}, ""},
		{"inline PEM, two keys", string(pub1) + string(pub2), []string{fp1, fp2}, ""},
		{"one path", a, []string{fp1}, ""},
		{"paths for rotation", a + ":" + b, []string{fp1, fp2}, ""},
		{"a file of two keys", both, []string{fp1, fp2}, ""},
		{"empty entries ignored", ":" + a + ":", []string{fp1}, ""},
		{"missing file", filepath.Join(dir, "nope.pub"), nil, "no such file"},
		{"a private key", privFile, nil, "holds a private key; give only public keys"},
		{"inline private key", string(priv), nil, "holds a private key"},
		{"a FIFO", fifo, nil, "is a named pipe (FIFO), not a regular file"},
		{"a device", "/dev/zero", nil, "is a character device, not a regular file"},
		{"only separators", ":::", nil, "names no key file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := trustedKeys(env(map[string]string{EnvTrustedKeys: tc.value}))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "MC4CAQ") {
					t.Errorf("the error quotes the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range keys {
				got = append(got, plan.Fingerprint(k))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("keys %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	priv, pub, fp := keyPair(t, 3)
	path := filepath.Join(dir, "k")
	os.WriteFile(path, priv, 0o600)
	for _, v := range []string{path, string(priv), "  " + string(priv) + "\n"} {
		k, err := signingKey(env(map[string]string{EnvSigningKey: v}))
		if err != nil {
			t.Fatalf("signingKey: %v", err)
		}
		if plan.Fingerprint(k.Public().(ed25519.PublicKey)) != fp {
			t.Error("another key")
		}
	}
	if k, err := signingKey(env(nil)); k != nil || err != nil {
		t.Errorf("unset: %v, %v", k, err)
	}
	_, err := signingKey(env(map[string]string{EnvSigningKey: string(pub)}))
	if err == nil || !strings.Contains(err.Error(), "RACKFORM_PLAN_SIGNING_KEY (the PEM text it holds): this is a public key") {
		t.Errorf("a public key: %v", err)
	}
}
