package plan

import (
	"strconv"

	"github.com/rackform/rackform/providers"
)

// Hand-written encoders for what every server of a plan has many of: its
// observed components and its steps. They append exactly the bytes
// encoding/json writes without HTML escaping (the canonical compact JSON
// of compact.go) — appendjson_test.go holds them to it over the golden
// plans and random values — at a fraction of the reflection's CPU and
// garbage: at 100,000 servers the digest of each server's other
// components, the interning of its lists and the file's tables encode
// millions of them.

// appendString appends s as encoding/json writes a string without HTML
// escaping. Printable ASCII is written as it is; a string with anything
// else (a control character, a quote, a backslash, non-ASCII) is rare in
// an inventory and is left to encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x80 || b == '"' || b == '\\' {
			return appendStringSlow(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendStringSlow(dst []byte, s string) []byte {
	b, _ := providers.MarshalRaw(s) // a string always encodes
	return append(dst, b...)
}

// field appends a key, preceded by a comma unless it is the object's
// first.
func field(dst []byte, first *bool, key string) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendStrings appends a []string; nil is null, as encoding/json writes
// it.
func appendStrings(dst []byte, list []string) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendComponent appends c as encoding/json writes a providers.Component.
func appendComponent(dst []byte, c *providers.Component) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, c.ID)
	if c.Name != "" {
		dst = appendString(append(dst, `,"name":`...), c.Name)
	}
	if c.SoftwareID != "" {
		dst = appendString(append(dst, `,"software_id":`...), c.SoftwareID)
	}
	dst = appendString(append(dst, `,"version":`...), c.Version)
	dst = strconv.AppendBool(append(dst, `,"updateable":`...), c.Updateable)
	if c.Source != "" {
		dst = appendString(append(dst, `,"source":`...), c.Source)
	}
	if c.Shared {
		dst = append(dst, `,"shared":true`...)
	}
	if c.State != "" {
		dst = appendString(append(dst, `,"state":`...), c.State)
	}
	if c.StateSign != "" {
		dst = appendString(append(dst, `,"state_sign":`...), c.StateSign)
	}
	return append(dst, '}')
}

// appendChange appends c as encoding/json writes a Change.
func appendChange(dst []byte, c *Change) []byte {
	dst = appendString(append(dst, `{"component":`...), c.Component)
	dst = appendString(append(dst, `,"kind":`...), c.Kind)
	dst = appendString(append(dst, `,"from":`...), c.From)
	dst = appendString(append(dst, `,"to":`...), c.To)
	dst = strconv.AppendBool(append(dst, `,"reboot":`...), c.Reboot)
	if c.Downgrade {
		dst = append(dst, `,"downgrade":true`...)
	}
	if c.Unordered {
		dst = append(dst, `,"unordered":true`...)
	}
	if c.Shared {
		dst = append(dst, `,"shared":true`...)
	}
	if c.FlashedBy != "" {
		dst = appendString(append(dst, `,"flashed_by":`...), c.FlashedBy)
	}
	if c.Members != 0 {
		dst = strconv.AppendInt(append(dst, `,"members":`...), int64(c.Members), 10)
	}
	if c.Moving != 0 {
		dst = strconv.AppendInt(append(dst, `,"moving":`...), int64(c.Moving), 10)
	}
	return append(dst, '}')
}

// appendMatch appends m as encoding/json writes a providers.Match.
func appendMatch(dst []byte, m *providers.Match) []byte {
	dst = append(dst, '{')
	first := true
	if m.SoftwareID != "" {
		dst = appendString(field(dst, &first, "software_id"), m.SoftwareID)
	}
	if m.ID != "" {
		dst = appendString(field(dst, &first, "id"), m.ID)
	}
	if m.NamePattern != "" {
		dst = appendString(field(dst, &first, "name"), m.NamePattern)
	}
	if m.Count != 0 {
		dst = strconv.AppendInt(field(dst, &first, "count"), int64(m.Count), 10)
	}
	return append(dst, '}')
}

// appendExpectation appends e as providers.Expectation.MarshalJSON
// writes it.
func appendExpectation(dst []byte, e *providers.Expectation) []byte {
	dst = appendString(append(dst, `{"component":`...), e.Component)
	dst = appendMatch(append(dst, `,"match":`...), &e.Match)
	dst = appendString(append(dst, `,"version":`...), e.Target.Version)
	if e.Target.Scheme != "" {
		dst = appendString(append(dst, `,"scheme":`...), string(e.Target.Scheme))
	}
	if e.Target.Pattern != "" {
		dst = appendString(append(dst, `,"pattern":`...), e.Target.Pattern)
	}
	return append(dst, '}')
}

// appendDuration appends d as Duration.MarshalJSON writes it (Go
// duration text holds nothing to escape).
func appendDuration(dst []byte, d Duration) []byte {
	dst = append(dst, '"')
	dst = append(dst, d.String()...)
	return append(dst, '"')
}

// appendStep appends s as the plan file writes a step (stepJSON). A
// learned estimate, found only in plans made with history, is left to
// encoding/json.
func appendStep(dst []byte, s *Step) ([]byte, error) {
	dst = strconv.AppendInt(append(dst, `{"index":`...), int64(s.Index), 10)
	dst = appendString(append(dst, `,"kind":`...), string(s.Kind))
	str := func(key, v string) {
		if v != "" {
			dst = append(dst, ',', '"')
			dst = append(dst, key...)
			dst = appendString(append(dst, '"', ':'), v)
		}
	}
	list := func(key string, v []string) {
		if len(v) != 0 {
			dst = append(dst, ',', '"')
			dst = append(dst, key...)
			dst = appendStrings(append(dst, '"', ':'), v)
		}
	}
	str("component", s.Component)
	if s.Match != nil {
		dst = appendMatch(append(dst, `,"match":`...), s.Match)
	}
	str("version", s.Target.Version)
	str("image", s.Image)
	str("apply_time", s.ApplyTime)
	str("apply_time_from", s.ApplyTimeFrom)
	str("method", s.Method)
	str("transfer_protocol", s.TransferProtocol)
	list("targets", s.Targets)
	list("members", s.Members)
	str("sha256", s.SHA256)
	if s.Shared {
		dst = append(dst, `,"shared":true`...)
	}
	list("after", s.After)
	str("scheme", string(s.Target.Scheme))
	str("pattern", s.Target.Pattern)
	str("reset_type", s.ResetType)
	if s.Timeout != 0 {
		dst = appendDuration(append(dst, `,"timeout":`...), s.Timeout)
	}
	if len(s.Expect) != 0 {
		dst = append(dst, `,"expect":[`...)
		for i := range s.Expect {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendExpectation(dst, &s.Expect[i])
		}
		dst = append(dst, ']')
	}
	dst = appendDuration(append(dst, `,"estimate":`...), s.Estimate)
	if s.Learned != nil {
		b, err := providers.MarshalRaw(s.Learned)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `,"learned":`...), b...)
	}
	return append(dst, '}'), nil
}
