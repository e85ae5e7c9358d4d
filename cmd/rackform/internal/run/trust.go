package run

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/rackform/rackform/planner/plan"
)

// Plan signing keys come from the environment, so a CI system's secret
// store can hand them to the plan job (private key) and the apply job
// (public keys) without a file in the repository.
const (
	// EnvSigningKey is the Ed25519 private key plan signs with: a PEM
	// file's path, or the PEM text itself (PKCS#8, as "openssl genpkey
	// -algorithm ed25519" and "rackform keygen" write it).
	EnvSigningKey = "RACKFORM_PLAN_SIGNING_KEY"
	// EnvTrustedKeys are the public keys apply trusts: PEM text (one or
	// more "PUBLIC KEY" blocks, as "openssl pkey -pubout" writes them), or
	// one or more file paths separated by ":" (the PATH separator), each
	// holding one or more keys. Several keys allow rotation.
	EnvTrustedKeys = "RACKFORM_PLAN_TRUSTED_KEYS"
)

// Trust is what may vouch for a plan: the plan file given to apply, or
// the plan the state backend stores for continue and approve (a state
// directory is as writable as a plan file, so the same rule decides).
type Trust struct {
	// Keys are the trusted public keys (EnvTrustedKeys); with any, only a
	// plan signed by one of them is accepted.
	Keys []ed25519.PublicKey
	// Expect is -expect-sha256 (ExpectSHA256, the hash that was
	// reviewed), checked by File.CheckSHA256 before decoding.
	Expect       bool
	ExpectSHA256 string
	// AllowUnsigned is -allow-unsigned: any plan that is not corrupt.
	AllowUnsigned bool
	// Interactive: a person at a terminal applies the file they have.
	Interactive bool
	// Command is the command that asks ("apply" when empty), for the
	// message of an *UnverifiedError.
	Command string
}

// UnverifiedError is a plan nothing vouches for outside a terminal: no
// trusted keys, no -expect-sha256, no -allow-unsigned. It is a usage
// error (exit 2): the command line lacks what the job must say.
type UnverifiedError struct{ Note, Command string }

func (e *UnverifiedError) Error() string {
	cmd := e.Command
	if cmd == "" {
		cmd = "apply"
	}
	return fmt.Sprintf("%s\nOutside a terminal, %s needs one of: %s with the public key of the plan job's signing key; -expect-sha256 HASH with the SHA-256 that was reviewed; or -allow-unsigned to accept any plan file that is not corrupt.", e.Note, cmd, EnvTrustedKeys)
}

// Check decides whether the decoded plan of f may be applied. It returns
// a warning to show when a person at a terminal applies a plan nothing
// checked, and an *UnverifiedError when nothing vouches for it outside a
// terminal. The SHA-256 is checked by File.CheckSHA256 (before decoding).
func (t Trust) Check(f *File, p *plan.Plan) (warning string, err error) {
	switch {
	case len(t.Keys) > 0:
		return "", Verify(f.Name, f.Bytes, p, t.Keys)
	case t.Expect, t.AllowUnsigned:
		return "", nil
	case t.Interactive:
		return unverifiedNote(f.Name, p), nil
	}
	return "", &UnverifiedError{Note: unverifiedNote(f.Name, p), Command: t.Command}
}

// unverifiedNote says why nothing vouches for the plan.
func unverifiedNote(name string, p *plan.Plan) string {
	if p.SignedBy != "" {
		return fmt.Sprintf("%s is signed by %s, but %s is not set, so the signature cannot be checked; its checksum detects corruption, not tampering.", name, p.SignedBy, EnvTrustedKeys)
	}
	return fmt.Sprintf("%s is not signed and no -expect-sha256 was given: its checksum detects corruption, not tampering.", name)
}

// Verify checks a plan file against the trusted keys. It returns nil when
// the plan is signed by one of them.
func Verify(name string, file []byte, p *plan.Plan, keys []ed25519.PublicKey) error {
	err := plan.VerifySignature(file, p, keys)
	if errors.Is(err, plan.ErrUnsigned) {
		return fmt.Errorf("%s is not signed, and %s is set: only plans signed by a trusted key are applied (plan with %s set in the plan job)", name, EnvTrustedKeys, EnvSigningKey)
	}
	if err != nil {
		return fmt.Errorf("%s is not signed by a trusted key: %w", name, err)
	}
	return nil
}

// ReadTrusted reads the plan file at path for apply and decides whether t
// vouches for it: the file is hashed as it is read and compared with the
// expected SHA-256 before it is decoded, so a file that is not the
// reviewed plan costs no decoding; a plan whose steps do not make the
// version changes it lists is refused. warning is for a person at a
// terminal applying a plan nothing checked.
func ReadTrusted(path string, t Trust) (f *File, p *plan.Plan, warning string, err error) {
	if f, err = ReadFile(path); err != nil {
		return nil, nil, "", err
	}
	if t.Expect {
		if err := f.CheckSHA256(t.ExpectSHA256); err != nil {
			return nil, nil, "", err
		}
	}
	if p, err = f.Decode(); err != nil {
		return nil, nil, "", err
	}
	if warning, err = t.Check(f, p); err != nil {
		return nil, nil, "", err
	}
	// Steps that do not make the changes the plan lists: a reviewer read
	// one version, apply would flash another.
	if err := plan.CheckSteps(p); err != nil {
		return nil, nil, "", fmt.Errorf("%s is not a usable plan: %w", f.Name, err)
	}
	return f, p, warning, nil
}
