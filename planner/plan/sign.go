package plan

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Plan signatures. A plan made with a signing key carries the key's
// fingerprint (SignedBy) and an Ed25519 signature (Signature) over the
// whole file with the values of Signature and Checksum left empty, so
// every byte apply acts on (targets, images, hooks, expiry, BMC
// addresses, the configuration snapshot) is covered. Keys are the
// standard encodings openssl reads and writes: PKCS#8 PEM private keys
// ("openssl genpkey -algorithm ed25519") and PKIX PEM public keys
// ("openssl pkey -pubout").

// SignatureAlgorithm prefixes Signature.
const SignatureAlgorithm = "ed25519"

// signaturePlaceholder holds the place of the signature while the file is
// encoded, so the signed bytes are those of the final layout.
const signaturePlaceholder = SignatureAlgorithm + ":"

// ErrUnsigned is returned by VerifySignature for a plan without a signature.
var ErrUnsigned = errors.New("the plan is not signed")

// SignatureError explains why a signed plan is not accepted.
type SignatureError struct {
	// SignedBy is the fingerprint the plan names ("" when unsigned).
	SignedBy string
	Reason   string
}

func (e *SignatureError) Error() string { return e.Reason }

// Fingerprint names a public key: "SHA256:" and the unpadded standard
// base64 of the SHA-256 of its PKIX (DER) encoding, in the style of ssh.
// The same value comes from
//
//	openssl pkey -pubin -in KEY.pub -outform DER | openssl dgst -sha256 -binary | base64
//
// (less the trailing "=").
func Fingerprint(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		// An ed25519.PublicKey of the wrong length; never from ParsePublicKeys.
		return "SHA256:invalid-key"
	}
	sum := sha256.Sum256(der)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// EncodeSigned is Encode with the plan signed by key: SignedBy and
// Signature are set from key, whatever p holds. Only plans of format 1.2
// or later can be signed.
func EncodeSigned(p *Plan, key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("signing plan: not an Ed25519 private key")
	}
	c := *p
	if c.FormatVersion == "" {
		c.FormatVersion = FormatVersion
	}
	if !FormatAtLeast(c.FormatVersion, 1, 2) {
		return nil, fmt.Errorf("signing plan: format %s has no signature; plans of format 1.2 and later are signed", c.FormatVersion)
	}
	c.SignedBy = Fingerprint(key.Public().(ed25519.PublicKey))
	c.Signature = signaturePlaceholder
	b, err := marshal(&c)
	if err != nil {
		return nil, err
	}
	_, sigStart, sigEnd, err := signedSpans(b)
	if err != nil {
		return nil, fmt.Errorf("signing plan: %w", err)
	}
	// The checksum is still empty: without the placeholder, b is the
	// signed message. Both edits are made in place, no copy of the plan.
	b = slices.Delete(b, sigStart, sigEnd)
	sig := SignatureAlgorithm + ":" + base64.StdEncoding.EncodeToString(ed25519.Sign(key, b))
	b = slices.Insert(b, sigStart, []byte(sig)...)
	return withChecksum(b)
}

// signedMessage returns the bytes a signature covers: file with the values
// of the top-level "signature" and "checksum" fields empty, and where the
// signature value is in file. The signature must be the field right
// before the checksum, the last one, as Encode writes them: a file laid
// out otherwise has no signature this function can find.
func signedMessage(file []byte) (msg []byte, sigStart, sigEnd int, err error) {
	ck, sigStart, sigEnd, err := signedSpans(file)
	if err != nil {
		return nil, 0, 0, err
	}
	msg = make([]byte, 0, len(file)-(sigEnd-sigStart)-(ck[1]-ck[0]))
	msg = append(msg, file[:sigStart]...)
	msg = append(msg, file[sigEnd:ck[0]]...)
	msg = append(msg, file[ck[1]:]...)
	return msg, sigStart, sigEnd, nil
}

// signedSpans finds the values of the top-level checksum (ck: start, end)
// and signature in file, for signedMessage.
func signedSpans(file []byte) (ck [2]int, sigStart, sigEnd int, err error) {
	l := layoutOf(file)
	ckStart, ckEnd, ok := valueSpan(file, l.checksumKey)
	if !ok {
		return ck, 0, 0, errors.New("the plan has no checksum")
	}
	i := bytes.LastIndex(file[:ckStart], l.signatureKey)
	if i < 0 {
		return ck, 0, 0, errors.New("the plan has no signature field")
	}
	sigStart = i + len(l.signatureKey)
	end := bytes.IndexByte(file[sigStart:], '"')
	if end < 0 {
		return ck, 0, 0, errors.New("the plan's signature is malformed")
	}
	sigEnd = sigStart + end
	// Nothing but the checksum's key may come between the two values.
	if between := file[sigEnd:ckStart]; !bytes.Equal(between, l.between) {
		return ck, 0, 0, errors.New("the plan's signature is not the field before its checksum")
	}
	return [2]int{ckStart, ckEnd}, sigStart, sigEnd, nil
}

// valueSpan finds the string value of the last key in file (key is the
// bytes up to and including the value's opening quote).
func valueSpan(file, key []byte) (start, end int, ok bool) {
	i := bytes.LastIndex(file, key)
	if i < 0 {
		return 0, 0, false
	}
	start = i + len(key)
	n := bytes.IndexByte(file[start:], '"')
	if n < 0 {
		return 0, 0, false
	}
	return start, start + n, true
}

// checkSignatureFields checks that a decoded plan's signature fields are
// both empty or both well formed (it does not verify the signature).
func checkSignatureFields(p *Plan) error {
	switch {
	case p.SignedBy == "" && p.Signature == "":
		return nil
	case p.SignedBy == "" || p.Signature == "":
		return &DecodeError{Reason: "the plan has only half a signature (signed_by and signature go together)"}
	case !strings.HasPrefix(p.SignedBy, "SHA256:"):
		return &DecodeError{Reason: fmt.Sprintf("signed_by %q is not a key fingerprint (SHA256:…)", p.SignedBy)}
	}
	if _, err := signatureBytes(p.Signature); err != nil {
		return &DecodeError{Reason: err.Error()}
	}
	return nil
}

func signatureBytes(s string) ([]byte, error) {
	alg, b64, ok := strings.Cut(s, ":")
	if !ok || alg != SignatureAlgorithm {
		return nil, fmt.Errorf("the plan's signature is not an %s signature", SignatureAlgorithm)
	}
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, errors.New("the plan's signature is malformed")
	}
	return sig, nil
}

// VerifySignature checks that file (whose decoded plan is p) is signed by
// one of the trusted keys and that the signature covers exactly these
// bytes. It returns ErrUnsigned for an unsigned plan and a
// *SignatureError for one signed by another key or changed after it was
// signed.
func VerifySignature(file []byte, p *Plan, trusted []ed25519.PublicKey) error {
	if p.Signature == "" && p.SignedBy == "" {
		return ErrUnsigned
	}
	if err := checkSignatureFields(p); err != nil {
		return &SignatureError{SignedBy: p.SignedBy, Reason: err.Error()}
	}
	var key ed25519.PublicKey
	fps := make([]string, 0, len(trusted))
	for _, k := range trusted {
		fp := Fingerprint(k)
		fps = append(fps, fp)
		if fp == p.SignedBy {
			key = k
		}
	}
	if key == nil {
		return &SignatureError{SignedBy: p.SignedBy, Reason: fmt.Sprintf("the plan is signed by %s, which is not a trusted key (trusted: %s)", p.SignedBy, strings.Join(fps, ", "))}
	}
	sig, _ := signatureBytes(p.Signature)
	msg, _, _, err := signedMessage(file)
	if err != nil {
		return &SignatureError{SignedBy: p.SignedBy, Reason: "the signature cannot be checked: " + err.Error()}
	}
	if !ed25519.Verify(key, msg, sig) {
		return &SignatureError{SignedBy: p.SignedBy, Reason: fmt.Sprintf("the signature by %s does not match the plan: the plan was changed after it was signed", p.SignedBy)}
	}
	return nil
}

// ParsePrivateKey reads an Ed25519 private key from PEM: PKCS#8
// ("-----BEGIN PRIVATE KEY-----"), as "openssl genpkey -algorithm
// ed25519" and "rackform keygen" write it. Errors never quote the key.
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			return nil, errors.New("no PEM private key found (want \"-----BEGIN PRIVATE KEY-----\", as openssl genpkey -algorithm ed25519 writes)")
		}
		switch blk.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return nil, errors.New("the PRIVATE KEY block is not a PKCS#8 key")
			}
			ek, ok := k.(ed25519.PrivateKey)
			if !ok {
				return nil, fmt.Errorf("the private key is %s, not Ed25519 (make one with rackform keygen or openssl genpkey -algorithm ed25519)", keyKind(k))
			}
			return ek, nil
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the private key is encrypted; rackform needs it unencrypted (keep it in the CI secret store instead)")
		case "PUBLIC KEY":
			return nil, errors.New("this is a public key; signing needs the private key")
		}
	}
}

// ParsePublicKeys reads every PKIX PEM public key ("-----BEGIN PUBLIC
// KEY-----", as "openssl pkey -pubout" writes it) in b; it refuses
// anything else in a PEM block, so a private key given by mistake is
// named as such.
func ParsePublicKeys(b []byte) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		switch blk.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return nil, errors.New("a PUBLIC KEY block is not a PKIX public key")
			}
			ek, ok := k.(ed25519.PublicKey)
			if !ok {
				return nil, fmt.Errorf("a public key is %s, not Ed25519", keyKind(k))
			}
			keys = append(keys, ek)
		case "PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("this holds a private key; give only public keys (openssl pkey -in KEY -pubout), never the private key")
		default:
			return nil, fmt.Errorf("a PEM block of type %q is not a public key", blk.Type)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no PEM public key found (want \"-----BEGIN PUBLIC KEY-----\", as openssl pkey -pubout writes)")
	}
	return keys, nil
}

func keyKind(k any) string {
	s := fmt.Sprintf("%T", k)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "*"), "crypto/")
	return strings.TrimSuffix(s, ".PrivateKey")
}

// MarshalPrivateKey encodes key as PKCS#8 PEM.
func MarshalPrivateKey(key ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// MarshalPublicKey encodes key as PKIX PEM.
func MarshalPublicKey(key ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
