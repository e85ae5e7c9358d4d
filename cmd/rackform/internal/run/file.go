package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// MaxPlanSize is the largest plan file rackform reads: 256 MiB. A plan
// takes at most about 1.5 KB per server (0.8 KB is usual), so a fleet of
// 100,000 servers plans to at most ~150 MB; decoding takes about ten
// times a file's size in memory, so a larger file is refused before it
// is read rather than let show or apply exhaust the machine.
const MaxPlanSize = 256 << 20

// File is a plan file read whole and hashed, not yet decoded.
type File struct {
	// Name is the path as the user gave it, for messages.
	Name   string
	Bytes  []byte
	SHA256 string
}

// ReadFile reads the plan file at path: a regular file of at most
// MaxPlanSize bytes, hashed while it is read.
func ReadFile(path string) (*File, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	if fi.Size() > MaxPlanSize {
		return nil, tooLarge(path, fi.Size())
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	h := sha256.New()
	// A file that grows while it is read is cut at the limit too.
	n, err := io.Copy(io.MultiWriter(&buf, h), io.LimitReader(f, MaxPlanSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	if n > MaxPlanSize {
		return nil, tooLarge(path, n)
	}
	return &File{Name: path, Bytes: buf.Bytes(), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func tooLarge(name string, size int64) error {
	return fmt.Errorf("%s is %s, larger than the %s rackform reads (a plan takes at most about 1.5 KB per server: 100,000 servers plan to about 150 MB); it is not a plan rackform wrote for a real fleet: check the file, or split the fleet with plan -target", name, regularfile.Size(size), regularfile.Size(MaxPlanSize))
}

// CheckSHA256 compares the file's SHA-256 with expect (hex, optionally
// "sha256:"-prefixed, any case): the hash that was reviewed. It needs no
// decoding, so a file that is not the reviewed plan is refused before
// any work is spent on it.
func (f *File) CheckSHA256(expect string) error {
	if !SameSHA256(f.SHA256, expect) {
		return fmt.Errorf("%s has SHA-256 %s, not the expected %s; it is not the plan that was reviewed", f.Name, f.SHA256, strings.TrimSpace(expect))
	}
	return nil
}

// SameSHA256 reports whether the hex SHA-256 sha is expect, given as a
// person or CI variable may write it ("sha256:" prefix, upper case,
// surrounding space).
func SameSHA256(sha, expect string) bool { return typedSHA256(expect) == strings.ToLower(sha) }

// typedSHA256 is a SHA-256 (or the start of one, as -run takes it) as a
// person or CI variable may write it, in lower case without "sha256:" or
// surrounding space.
func typedSHA256(s string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "sha256:"))
}

// ReadPlan reads the plan file at path (ReadFile) and decodes it
// (Decode).
func ReadPlan(path string) (*File, *plan.Plan, error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	p, err := f.Decode()
	if err != nil {
		return nil, nil, err
	}
	return f, p, nil
}

// Decode decodes and checks the plan (format, checksum, signature fields).
func (f *File) Decode() (*plan.Plan, error) {
	// A plan nests 13 levels deep; the JSON decoder gives up at 10,000 in
	// words that do not say why.
	if err := regularfile.CheckDepth(f.Name, f.Bytes, regularfile.JSON, regularfile.MaxDepth); err != nil {
		return nil, fmt.Errorf("%s is not a usable plan: %w", f.Name, err)
	}
	p, err := plan.Decode(f.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable plan: %w", f.Name, err)
	}
	// The snapshot's configuration is parsed later (apply, the backend
	// settings): one nested deeper than the parser can take is refused
	// now, naming the plan, rather than crash the run then.
	for _, sf := range p.Config.Files {
		b, err := sf.Bytes()
		if err != nil {
			continue // LoadSnapshot says which file is damaged
		}
		if err := config.CheckSource(sf.Name, b); err != nil {
			return nil, fmt.Errorf("%s is not a usable plan: in its configuration snapshot, %w", f.Name, err)
		}
	}
	return p, nil
}
