package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// FormatVersion is the plan file format this rackform writes. Readers accept
// the same major and any minor up to their own.
//
// 1.1 added the configuration snapshot's data files (Snapshot.DataFiles,
// File.Encoding): a 1.0 reader would refuse such a plan field by field, so
// it is told to upgrade instead. 1.2 added the signature (SignedBy,
// Signature); plans of 1.0 and 1.1 are still read, as unsigned plans.
// 1.3 records what real BMCs need for apply to do exactly what was
// reviewed: each server's observation outcome, identity and system, where
// each version was read and which components are shared by a BMC, each
// update's method, transfer protocol, targets and image digest, the
// servers held back with their problems, shared updates planned once per
// BMC. 1.4 is the compact file (see compact.go): canonical compact JSON,
// components, changes and steps written once in "tables" and named by
// position, and each server's observed inventory reduced to the
// components the plan decides on, with a count and digest of the rest
// (Observed.Others). 1.5 records the inventory member model: each
// observed member's state (which one runs, and the copies beside it),
// how many members each change moves, the members each update is for, the
// apply time each update sends and why (what the BMC lists), and how each
// BMC took the credentials (a session or Basic); the estimates learned
// from earlier runs' journals (Step.Learned, Plan.History: estimate.go);
// and what a run's trust and state depend on beyond the configuration:
// each provider's CA bundle digest (Provider.CABundleSHA256) and where the
// run keeps its state (State). 1.6 records the rack members that are not
// servers: a device's kind (Server.Kind: switch trays, power shelves,
// chassis controllers), with only update and wait_ready steps, and the
// cluster phase that holds them (PhaseDevices); and the servers upgraded
// although their BMC reported health Critical, with the reviewed reason
// (Server.UpgradeWhenCritical). show reads every earlier format; apply
// starts runs of 1.6 plans only (see Applicable).
const FormatVersion = "1.6"

// ApplicableFormat is the oldest format apply starts a run from.
const ApplicableFormat = "1.6"

// Applicable says why apply must not start a run from p, or nil. Plans
// before 1.3 do not say how each image is delivered (apply would let the
// provider choose anew) nor who each server is (a replaced machine would
// be flashed); 1.3 plans are not in the compact form of 1.4 (the
// observation reduced to what the plan decides on, with a digest of the
// rest); 1.4 plans do not say which inventory member runs (a rollback
// image beside it would be read as the firmware, one GPU of eight
// verified); 1.5 plans cannot say which rack members are not servers nor
// which servers were reviewed to be upgraded although Critical, so the
// plan applied would not be known to be the whole of what was reviewed by
// this rackform. show still reads them, but they are planned again.
func Applicable(p *Plan) error {
	maj, min, _ := parseFormat(ApplicableFormat)
	if FormatAtLeast(p.FormatVersion, maj, min) {
		return nil
	}
	if FormatAtLeast(p.FormatVersion, 1, 5) {
		return fmt.Errorf("plan format %s was written by an older rackform: it cannot hold the rack members that are not servers (switch trays, power shelves, chassis controllers) nor a server reviewed to be upgraded although its BMC reports health Critical, which this rackform plans and applies differently; run rackform plan again with this rackform (rackform show still reads the old plan)", p.FormatVersion)
	}
	if FormatAtLeast(p.FormatVersion, 1, 4) {
		return fmt.Errorf("plan format %s was written by an older rackform: it does not record which inventory member of each component is running, so apply could not tell a server at its target from one whose rollback or staged copy is older (or verify every GPU of eight), nor which apply time each BMC takes and how each takes the credentials; run rackform plan again with this rackform (rackform show still reads the old plan)", p.FormatVersion)
	}
	if FormatAtLeast(p.FormatVersion, 1, 3) {
		return fmt.Errorf("plan format %s was written by an older rackform: it is not in the compact form of format 1.4 that this rackform applies (what servers share written once; each server's observed inventory reduced to the components the plan decides on, with a count and digest of the rest of what its BMC reported); run rackform plan again with this rackform (rackform show still reads the old plan)", p.FormatVersion)
	}
	return fmt.Errorf("plan format %s was written by an older rackform: it does not record how each image is delivered to its BMC nor who each server is, so apply could not do exactly what was reviewed or notice a replaced machine; run rackform plan again with this rackform (rackform show still reads the old plan)", p.FormatVersion)
}

// layout is where the checksum and signature are in one file layout: the
// indented files of formats up to 1.3 or the compact ones from 1.4. Each
// key is the bytes up to and including the value's opening quote.
type layout struct {
	checksumKey []byte
	// signatureKey starts with what precedes the key at the top level,
	// so a nested "signature" (a label, a variable) never matches.
	signatureKey []byte
	// between is what separates the signature's value from the
	// checksum's: the signature is the field right before it.
	between []byte
}

var (
	indented = layout{
		checksumKey:  []byte(`"checksum": "`),
		signatureKey: []byte("\n  \"signature\": \""),
		between:      []byte("\",\n  \"checksum\": \""),
	}
	compact = layout{
		checksumKey:  []byte(`"checksum":"`),
		signatureKey: []byte(`,"signature":"`),
		between:      []byte(`","checksum":"`),
	}
)

// layoutOf says which layout file has: the one whose checksum key comes
// last. The two cannot be confused: outside strings a compact file has no
// whitespace, and inside strings every quote is escaped.
func layoutOf(file []byte) layout {
	// The checksum is the last field: search from the end, and only past
	// a compact key for an indented one (never scanning a compact file).
	i := bytes.LastIndex(file, compact.checksumKey)
	if i < 0 || bytes.Contains(file[i:], indented.checksumKey) {
		return indented
	}
	return compact
}

// Encode returns the plan file bytes, deterministic for equal plans, with
// the checksum filled in: compact JSON for format 1.4 and later (see
// compact.go), indented JSON for earlier formats (so an old plan encodes
// to the bytes its rackform wrote). p is not modified. SignedBy and
// Signature are written as p holds them (EncodeSigned signs).
func Encode(p *Plan) ([]byte, error) {
	c := *p
	if c.FormatVersion == "" {
		c.FormatVersion = FormatVersion
	}
	b, err := marshal(&c)
	if err != nil {
		return nil, err
	}
	return withChecksum(b)
}

// marshal encodes c with an empty checksum, in the layout of its format.
func marshal(c *Plan) ([]byte, error) {
	c.Checksum = ""
	if FormatAtLeast(c.FormatVersion, 1, 4) {
		return marshalCompact(c)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encoding plan: %w", err)
	}
	return buf.Bytes(), nil
}

// withChecksum fills the empty checksum of an encoded plan with the
// SHA-256 of the bytes as they are, in place when b has the room.
func withChecksum(b []byte) ([]byte, error) {
	sum := sha256.Sum256(b)
	key := append(append([]byte{}, layoutOf(b).checksumKey...), '"')
	i := bytes.LastIndex(b, key)
	if i < 0 {
		return nil, errors.New("encoding plan: checksum field missing")
	}
	v := hex.AppendEncode([]byte("sha256:"), sum[:])
	return slices.Insert(b, i+len(key)-1, v...), nil
}

// SHA256 is the plan's identity: the hex SHA-256 of the file bytes.
func SHA256(file []byte) string {
	sum := sha256.Sum256(file)
	return hex.EncodeToString(sum[:])
}

// DecodeError explains why a plan file was refused.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode parses and checks a plan file: JSON shape, format version,
// checksum, and that a signature, when there is one, is well formed. It
// refuses corrupt, truncated and unknown-major files. The checksum detects
// corruption, not tampering (anyone who can write the file can recompute
// it): VerifySignature and the caller's expected SHA-256 detect that.
func Decode(file []byte) (*Plan, error) {
	if len(bytes.TrimSpace(file)) == 0 {
		return nil, &DecodeError{Reason: "the file is empty"}
	}
	// A compact file starts with its format: read it there rather than
	// parse the whole file once more; only a file that then fails is
	// parsed for the reason (not JSON, truncated).
	format, fast := leadingFormat(file)
	if !fast {
		var err error
		if format, err = headFormat(file); err != nil {
			return nil, err
		}
	}
	p, err := decodeFormat(file, format)
	if err != nil && fast {
		if _, herr := headFormat(file); herr != nil {
			return nil, herr
		}
	}
	return p, err
}

// compactStart is how a compact file begins: format_version is the first
// field Encode writes.
var compactStart = []byte(`{"format_version":"`)

// leadingFormat returns the format of a file starting with compactStart
// and a plain MAJOR.MINOR value.
func leadingFormat(file []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(file, compactStart)
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || end > 16 {
		return "", false
	}
	for _, c := range rest[:end] {
		if c != '.' && (c < '0' || c > '9') {
			return "", false
		}
	}
	return string(rest[:end]), true
}

// headFormat parses the whole file for its format_version, saying why
// when it is no plan file at all.
func headFormat(file []byte) (string, error) {
	var head struct {
		FormatVersion *string `json:"format_version"`
	}
	if err := json.Unmarshal(file, &head); err != nil {
		return "", syntaxError(file, err)
	}
	if head.FormatVersion == nil {
		return "", &DecodeError{Reason: "not a rackform plan file (no format_version)"}
	}
	return *head.FormatVersion, nil
}

func decodeFormat(file []byte, format string) (*Plan, error) {
	if err := checkVersion(format); err != nil {
		return nil, err
	}
	if err := verifyChecksum(file); err != nil {
		return nil, err
	}
	var p *Plan
	if FormatAtLeast(format, 1, 4) {
		var err error
		if p, err = decodeCompact(file, format); err != nil {
			return nil, err
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(file))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		p = new(Plan)
		if err := dec.Decode(p); err != nil {
			return nil, &DecodeError{Reason: "the plan does not match format " + format, Err: err}
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, &DecodeError{Reason: "unexpected data after the plan"}
		}
	}
	if err := checkSignatureFields(p); err != nil {
		return nil, err
	}
	return p, nil
}

func syntaxError(file []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) && int(se.Offset) >= len(bytes.TrimRight(file, " \t\r\n")) {
		return &DecodeError{Reason: fmt.Sprintf("the file is truncated (ends after %d bytes)", len(file))}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		return &DecodeError{Reason: fmt.Sprintf("the file is truncated (ends after %d bytes)", len(file))}
	}
	return &DecodeError{Reason: "the file is not valid JSON", Err: err}
}

func checkVersion(v string) error {
	maj, min, ok := parseFormat(v)
	if !ok {
		return &DecodeError{Reason: fmt.Sprintf("format_version %q is not MAJOR.MINOR", v)}
	}
	ourMaj, ourMin, _ := parseFormat(FormatVersion)
	if maj != ourMaj {
		return &DecodeError{Reason: fmt.Sprintf("plan format %s is not supported: this rackform reads format %d.x; use the rackform version that wrote the plan, or plan again", v, ourMaj)}
	}
	if min > ourMin {
		return &DecodeError{Reason: fmt.Sprintf("plan format %s is newer than this rackform (reads up to %s); upgrade rackform", v, FormatVersion)}
	}
	return nil
}

func parseFormat(v string) (maj, min int, ok bool) {
	major, minor, ok := strings.Cut(v, ".")
	maj, err1 := strconv.Atoi(major)
	min, err2 := strconv.Atoi(minor)
	return maj, min, ok && err1 == nil && err2 == nil
}

// FormatAtLeast reports whether format v is maj.min or later.
func FormatAtLeast(v string, maj, min int) bool {
	a, b, ok := parseFormat(v)
	return ok && (a > maj || a == maj && b >= min)
}

func verifyChecksum(file []byte) error {
	key := layoutOf(file).checksumKey
	start, end, ok := valueSpan(file, key)
	if !ok {
		if bytes.Contains(file, key) {
			return &DecodeError{Reason: "the plan's checksum is malformed"}
		}
		return &DecodeError{Reason: "the plan has no checksum"}
	}
	got := file[start:end]
	// The file with the value left out, hashed in two pieces (no copy).
	h := sha256.New()
	h.Write(file[:start])
	h.Write(file[end:])
	want := hex.AppendEncode([]byte("sha256:"), h.Sum(nil))
	if !bytes.Equal(got, want) {
		return &DecodeError{Reason: "the file is damaged or was edited after it was written (checksum mismatch); plan again instead of editing the file"}
	}
	return nil
}
