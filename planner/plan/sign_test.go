package plan

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// testKey is a fixed key, so the signed golden plan is stable.
func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func TestSignRoundTrip(t *testing.T) {
	key := testKey(1)
	file, err := EncodeSigned(samplePlan(), key)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(file)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if p.SignedBy != Fingerprint(pub(key)) || !strings.HasPrefix(p.Signature, "ed25519:") {
		t.Fatalf("signed_by %q, signature %q", p.SignedBy, p.Signature)
	}
	if err := VerifySignature(file, p, []ed25519.PublicKey{pub(testKey(2)), pub(key)}); err != nil {
		t.Fatalf("VerifySignature with the key among others: %v", err)
	}
	// A decoded signed plan encodes to the same bytes: the signature is
	// data like the rest, and nothing is re-signed.
	again, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, file) {
		t.Error("re-encoding a decoded signed plan changed its bytes")
	}
	// Deterministic: Ed25519 signatures do not depend on randomness.
	twice, _ := EncodeSigned(samplePlan(), key)
	if !bytes.Equal(twice, file) {
		t.Error("signing the same plan twice gave different files")
	}
}

// Every edit an attacker with write access to the plan would make, with the
// checksum recomputed, is refused by the signature.
func TestSignatureCoversEverything(t *testing.T) {
	key := testKey(1)
	trusted := []ed25519.PublicKey{pub(key)}
	edits := []struct {
		name string
		edit func(p *Plan)
	}{
		{"target version", func(p *Plan) { p.Servers[0].Steps[1].Target.Version = "6.6.6" }},
		{"image", func(p *Plan) { p.Servers[0].Steps[1].Image = "http://evil.example/bios.bin" }},
		{"drain hook", func(p *Plan) {
			p.Run.Stages[0].Groups[0].Clusters[0].Settings.DrainHook = []string{"sh", "-c", "touch /tmp/owned"}
		}},
		{"expiry", func(p *Plan) { p.NotAfter = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"bmc address", func(p *Plan) { p.Servers[0].BMC = "https://198.51.100.7" }},
		{"configuration snapshot", func(p *Plan) { p.Config.Files[0].Content += "# more\n" }},
		{"threshold", func(p *Plan) { p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes[0].Required = 0 }},
		{"signed_by", func(p *Plan) { p.SignedBy = Fingerprint(pub(testKey(3))) }},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			file, err := EncodeSigned(samplePlan(), key)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Decode(file)
			if err != nil {
				t.Fatal(err)
			}
			e.edit(p)
			// Encode keeps the old signature and recomputes the checksum:
			// the file decodes (the checksum only detects corruption).
			edited, err := Encode(p)
			if err != nil {
				t.Fatal(err)
			}
			ep, err := Decode(edited)
			if err != nil {
				t.Fatalf("the resealed file does not decode: %v", err)
			}
			err = VerifySignature(edited, ep, trusted)
			var se *SignatureError
			if !errors.As(err, &se) {
				t.Fatalf("VerifySignature = %v, want a *SignatureError", err)
			}
			if e.name == "signed_by" {
				if !strings.Contains(err.Error(), "not a trusted key") {
					t.Errorf("error %q does not say the signer is not trusted", err)
				}
				return
			}
			if !strings.Contains(err.Error(), "changed after it was signed") {
				t.Errorf("error %q does not say the plan was changed", err)
			}
		})
	}
}

func TestVerifyRefusals(t *testing.T) {
	key, other := testKey(1), testKey(2)
	signed, _ := EncodeSigned(samplePlan(), key)
	unsigned, _ := Encode(samplePlan())

	p, _ := Decode(unsigned)
	if err := VerifySignature(unsigned, p, []ed25519.PublicKey{pub(key)}); !errors.Is(err, ErrUnsigned) {
		t.Errorf("unsigned: %v, want ErrUnsigned", err)
	}

	// Stripping the signature makes it an unsigned plan, never a signed one.
	sp, _ := Decode(signed)
	sp.SignedBy, sp.Signature = "", ""
	stripped, _ := Encode(sp)
	p, err := Decode(stripped)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignature(stripped, p, []ed25519.PublicKey{pub(key)}); !errors.Is(err, ErrUnsigned) {
		t.Errorf("stripped: %v, want ErrUnsigned", err)
	}

	// Re-signed by an attacker's own key: not trusted.
	sp, _ = Decode(signed)
	resigned, _ := EncodeSigned(sp, other)
	p, _ = Decode(resigned)
	err = VerifySignature(resigned, p, []ed25519.PublicKey{pub(key)})
	if err == nil || !strings.Contains(err.Error(), "signed by "+Fingerprint(pub(other))+", which is not a trusted key (trusted: "+Fingerprint(pub(key))+")") {
		t.Errorf("re-signed: %v", err)
	}

	// Half a signature, or a malformed one, is refused when decoding.
	sp, _ = Decode(signed)
	sp.Signature = ""
	half, _ := Encode(sp)
	if _, err := Decode(half); err == nil || !strings.Contains(err.Error(), "half a signature") {
		t.Errorf("half a signature: %v", err)
	}
	sp, _ = Decode(signed)
	sp.Signature = "rsa:AAAA"
	bad, _ := Encode(sp)
	if _, err := Decode(bad); err == nil || !strings.Contains(err.Error(), "not an ed25519 signature") {
		t.Errorf("other algorithm: %v", err)
	}
}

// A label or variable named "signature" is data, never taken for the
// plan's signature.
func TestSignatureFieldIsTopLevel(t *testing.T) {
	sp := samplePlan()
	sp.Servers[0].Labels = map[string]string{"signature": "ed25519:" + base64.StdEncoding.EncodeToString(make([]byte, 64))}
	sp.Inputs.Variables["signature"] = "x"
	key := testKey(1)
	file, err := EncodeSigned(sp, key)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignature(file, p, []ed25519.PublicKey{pub(key)}); err != nil {
		t.Fatalf("VerifySignature: %v", err)
	}
	// Changing the label is a change like any other.
	edited := bytes.Replace(file, []byte(`"signature":"x"`), []byte(`"signature":"y"`), 1)
	edited = reseal(t, edited)
	p, err = Decode(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignature(edited, p, []ed25519.PublicKey{pub(key)}); err == nil {
		t.Fatal("an edited variable named signature verified")
	}
	unsigned, _ := Encode(sp)
	p, _ = Decode(unsigned)
	if err := VerifySignature(unsigned, p, []ed25519.PublicKey{pub(key)}); !errors.Is(err, ErrUnsigned) {
		t.Errorf("an unsigned plan with a label named signature: %v, want ErrUnsigned", err)
	}
}

func TestOlderFormatsCannotBeSigned(t *testing.T) {
	p := samplePlan()
	p.FormatVersion = "1.1"
	if _, err := EncodeSigned(p, testKey(1)); err == nil || !strings.Contains(err.Error(), "format 1.1 has no signature") {
		t.Fatalf("EncodeSigned of a 1.1 plan: %v", err)
	}
}

// Plans written by earlier formats are still read (show), verify and
// re-encode to their own bytes; testdata holds a plan of each format as
// that version of rackform wrote it: 1.0, 1.1, and signed 1.2 to 1.6.
func TestFormatGoldens(t *testing.T) {
	// Only the current format's golden is written; earlier ones are kept
	// as those versions of rackform wrote them.
	signedGolden := filepath.Join("testdata", "format-1.6-signed.plan.json")
	if *update {
		b, err := EncodeSigned(samplePlan16(), testKey(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(signedGolden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file, format string
		signed       bool
	}{
		{"format-1.0.plan.json", "1.0", false},
		{"format-1.1.plan.json", "1.1", false},
		{"format-1.2-signed.plan.json", "1.2", true},
		{"format-1.3-signed.plan.json", "1.3", true},
		{"format-1.4-signed.plan.json", "1.4", true},
		{"format-1.5-signed.plan.json", "1.5", true},
		{"format-1.6-signed.plan.json", "1.6", true},
	} {
		t.Run(tc.format, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if p.FormatVersion != tc.format {
				t.Errorf("format %s, want %s", p.FormatVersion, tc.format)
			}
			err = VerifySignature(b, p, []ed25519.PublicKey{pub(testKey(1))})
			switch {
			case tc.signed && err != nil:
				t.Errorf("VerifySignature: %v", err)
			case !tc.signed && !errors.Is(err, ErrUnsigned):
				t.Errorf("VerifySignature: %v, want ErrUnsigned", err)
			}
			// A plan of an earlier format re-encodes to its own bytes.
			again, err := Encode(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(b), string(again)); diff != "" {
				t.Errorf("re-encoding changed the file (-file +encoded):\n%s", diff)
			}
		})
	}
}

func TestParseKeys(t *testing.T) {
	key := testKey(7)
	privPEM, err := MarshalPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := MarshalPublicKey(pub(key))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePrivateKey(privPEM)
	if err != nil || !got.Equal(key) {
		t.Fatalf("ParsePrivateKey: %v", err)
	}
	pubPEM2, _ := MarshalPublicKey(pub(testKey(8)))
	keys, err := ParsePublicKeys(append(append([]byte("# rotation: old and new\n"), pubPEM...), pubPEM2...))
	if err != nil || len(keys) != 2 || !keys[0].Equal(pub(key)) || !keys[1].Equal(pub(testKey(8))) {
		t.Fatalf("ParsePublicKeys of two keys: %v, %d keys", err, len(keys))
	}
	for _, tc := range []struct {
		name string
		in   []byte
		priv bool
		want string
	}{
		{"private for public", privPEM, false, "holds a private key"},
		{"public for private", pubPEM, true, "this is a public key"},
		{"nothing", []byte("hello"), false, "no PEM public key found"},
		{"no private", []byte("hello"), true, "no PEM private key found"},
		{"encrypted", []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), true, "encrypted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.priv {
				_, err = ParsePrivateKey(tc.in)
			} else {
				_, err = ParsePublicKeys(tc.in)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "MC4CAQ") {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}

// needOpenSSL returns the openssl binary, skipping when it is missing.
func needOpenSSL(t *testing.T) string {
	t.Helper()
	return testenv.Binary(t, testenv.OpenSSL, "openssl")
}

// The keys and signatures are the standard ones: openssl makes a key
// rackform signs with, openssl verifies rackform's signature over the
// signed bytes, reads rackform's keys, and computes the same fingerprint.
func TestOpenSSLInterop(t *testing.T) {
	openssl := needOpenSSL(t)
	dir := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("genpkey", "-algorithm", "ed25519", "-out", "k.pem")
	run("pkey", "-in", "k.pem", "-pubout", "-out", "k.pub")
	privPEM, _ := os.ReadFile(filepath.Join(dir, "k.pem"))
	pubPEM, _ := os.ReadFile(filepath.Join(dir, "k.pub"))
	key, err := ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatalf("ParsePrivateKey of openssl's key: %v", err)
	}
	trusted, err := ParsePublicKeys(pubPEM)
	if err != nil {
		t.Fatalf("ParsePublicKeys of openssl's key: %v", err)
	}
	file, err := EncodeSigned(samplePlan(), key)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Decode(file)
	if err := VerifySignature(file, p, trusted); err != nil {
		t.Fatalf("VerifySignature with openssl's public key: %v", err)
	}

	// openssl verifies the signature over the signed bytes.
	msg, _, _, err := signedMessage(file)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := signatureBytes(p.Signature)
	os.WriteFile(filepath.Join(dir, "msg"), msg, 0o644)
	os.WriteFile(filepath.Join(dir, "sig"), sig, 0o644)
	if out := run("pkeyutl", "-verify", "-pubin", "-inkey", "k.pub", "-rawin", "-in", "msg", "-sigfile", "sig"); !bytes.Contains(out, []byte("Signature Verified Successfully")) {
		t.Errorf("openssl pkeyutl -verify: %s", out)
	}
	// ... and refuses it over other bytes.
	os.WriteFile(filepath.Join(dir, "msg2"), append(msg, ' '), 0o644)
	cmd := exec.Command(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", "k.pub", "-rawin", "-in", "msg2", "-sigfile", "sig")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("openssl verified the signature over other bytes: %s", out)
	}

	// The fingerprint, as openssl computes it.
	der := run("pkey", "-pubin", "-in", "k.pub", "-outform", "DER")
	sum := sha256.Sum256(der)
	if want := "SHA256:" + strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "="); Fingerprint(trusted[0]) != want {
		t.Errorf("Fingerprint = %s, openssl's DER hashes to %s", Fingerprint(trusted[0]), want)
	}

	// rackform's own encodings are read by openssl.
	mine, _ := MarshalPrivateKey(testKey(9))
	minePub, _ := MarshalPublicKey(pub(testKey(9)))
	os.WriteFile(filepath.Join(dir, "mine.pem"), mine, 0o600)
	os.WriteFile(filepath.Join(dir, "mine.pub"), minePub, 0o644)
	if out := run("pkey", "-in", "mine.pem", "-pubout"); !bytes.Equal(out, minePub) {
		t.Errorf("openssl derives another public key from rackform's private key:\n%s\nwant\n%s", out, minePub)
	}
	run("pkey", "-pubin", "-in", "mine.pub", "-noout")
}
