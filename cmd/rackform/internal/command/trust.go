package command

import (
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// The environment variables of plan signing (see package run).
const (
	EnvSigningKey  = run.EnvSigningKey
	EnvTrustedKeys = run.EnvTrustedKeys
)

// keyFile bounds what is read from a key file: PEM keys are a few
// hundred bytes. A key file that is a FIFO or a device is refused
// (regularfile.Read) instead of blocking or reading forever.
var keyFile = regularfile.Limit{Bytes: 1 << 20, What: "a key file"}

// signingKey returns the key RACKFORM_PLAN_SIGNING_KEY holds or names, nil
// when it is unset. Errors never quote the key.
func signingKey(getenv func(string) string) (ed25519.PrivateKey, error) {
	v := strings.TrimSpace(getenv(EnvSigningKey))
	if v == "" {
		return nil, nil
	}
	b, src := []byte(v), "the PEM text it holds"
	if !isPEM(v) {
		var err error
		if b, err = regularfile.Read(v, keyFile); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvSigningKey, err)
		}
		src = v
	}
	k, err := plan.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", EnvSigningKey, src, err)
	}
	return k, nil
}

// trustedKeys returns the keys RACKFORM_PLAN_TRUSTED_KEYS holds or names,
// nil when it is unset. A value that is set but holds no usable key is an
// error: a misconfigured trust must not silently mean "trust anything".
func trustedKeys(getenv func(string) string) ([]ed25519.PublicKey, error) {
	v := strings.TrimSpace(getenv(EnvTrustedKeys))
	if v == "" {
		return nil, nil
	}
	if isPEM(v) {
		keys, err := plan.ParsePublicKeys([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("%s (the PEM text it holds): %w", EnvTrustedKeys, err)
		}
		return keys, nil
	}
	var keys []ed25519.PublicKey
	for _, path := range filepath.SplitList(v) {
		if path = strings.TrimSpace(path); path == "" {
			continue
		}
		b, err := regularfile.Read(path, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvTrustedKeys, err)
		}
		k, err := plan.ParsePublicKeys(b)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", EnvTrustedKeys, path, err)
		}
		keys = append(keys, k...)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s names no key file", EnvTrustedKeys)
	}
	return keys, nil
}

func isPEM(v string) bool { return strings.Contains(v, "-----BEGIN ") }

// signatureLine says who signed a plan and whether that was checked, for
// show.
func signatureLine(p *plan.Plan, keys []ed25519.PublicKey) string {
	switch {
	case p.SignedBy == "" && len(keys) > 0:
		return fmt.Sprintf("Signature: none; apply refuses this plan while %s is set", EnvTrustedKeys)
	case p.SignedBy == "":
		return "Signature: none (unsigned; its checksum detects corruption, not tampering: apply it with -expect-sha256 and the SHA-256 above)"
	case len(keys) > 0:
		return fmt.Sprintf("Signature: %s, verified: a trusted key (%s)", p.SignedBy, EnvTrustedKeys)
	}
	return fmt.Sprintf("Signature: %s, not verified here (%s is not set)", p.SignedBy, EnvTrustedKeys)
}
