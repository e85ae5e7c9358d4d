package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// File is a plan file read whole and hashed, not yet decoded.
type File struct {
	// Name is the path as the user gave it, for messages.
	Name   string
	Bytes  []byte
	SHA256 string
}

// ReadFile reads the plan file at path, a regular file, hashed while it
// is read.
func ReadFile(path string) (*File, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(&buf, h), f); err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	return &File{Name: path, Bytes: buf.Bytes(), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// CheckSHA256 compares the file's SHA-256 with expect (hex, optionally
// "sha256:"-prefixed, any case): the hash that was reviewed.
func (f *File) CheckSHA256(expect string) error {
	if !SameSHA256(f.SHA256, expect) {
		return fmt.Errorf("%s has SHA-256 %s, not the expected %s; it is not the plan that was reviewed", f.Name, f.SHA256, strings.TrimSpace(expect))
	}
	return nil
}

// SameSHA256 reports whether the hex SHA-256 sha is expect, given as a
// person or CI variable may write it ("sha256:" prefix, upper case,
// surrounding space).
func SameSHA256(sha, expect string) bool {
	return strings.EqualFold(strings.TrimPrefix(strings.TrimSpace(expect), "sha256:"), sha)
}

// Decode decodes and checks the plan (format, checksum, signature fields).
func (f *File) Decode() (*plan.Plan, error) {
	p, err := plan.Decode(f.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable plan: %w", f.Name, err)
	}
	return p, nil
}
