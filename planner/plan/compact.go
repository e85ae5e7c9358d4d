package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/rackform/rackform/providers"
)

// The compact plan file (format 1.4 and later).
//
// The file is canonical compact JSON: no whitespace between tokens, object
// keys in the order of the Go structs (map keys sorted), "<", ">" and "&"
// written as they are, one newline at the end. Equal plans give equal
// bytes, so the file's SHA-256 is still the plan's identity.
//
// What many servers share is written once: the top-level "tables" object
// holds every distinct observed component, change and step, in the order
// the servers first use them, and each server lists theirs by position in
// its table:
//
//	"tables":{"components":[{"id":"BIOS",...},...],"changes":[...],"steps":[...]},
//	"servers":[{"address":"lab/r01/r01-s01",...,
//	  "observed":{"reachable":true,...,"others":{"count":2,"sha256":"…"},"components":[0,1]},
//	  "changes":[0,1],"steps":[0,1,2,3]},...]
//
// Decode expands the positions again, so every reader gets the same Plan
// as from an earlier format; servers that name the same positions share
// one list, read-only (intern.go). `rackform show -json` prints a keyed
// view of the expanded plan (cmd/rackform/internal/command/views/planview).

// compactTables is "tables" as Decode reads it.
type compactTables struct {
	Components []providers.Component `json:"components,omitempty"`
	Changes    []Change              `json:"changes,omitempty"`
	Steps      []Step                `json:"steps,omitempty"`
}

// The *Fields types are the plan's own types without their methods, so a
// struct embedding one has their fields and JSON names; the compact types
// replace the fields that are written as table positions.
type (
	planFields     Plan
	serverFields   Server
	observedFields Observed
)

type compactObserved struct {
	observedFields
	Components []int `json:"components,omitempty"`
}

type compactServer struct {
	serverFields
	Observed compactObserved `json:"observed"`
	Changes  []int           `json:"changes,omitempty"`
	Steps    []int           `json:"steps,omitempty"`
}

type compactPlan struct {
	planFields
	Tables  compactTables   `json:"tables"`
	Servers []compactServer `json:"servers"`
}

// canonical encodes values as canonical compact JSON into one reused
// buffer.
type canonical struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newCanonical() *canonical {
	c := &canonical{}
	c.enc = json.NewEncoder(&c.buf)
	c.enc.SetEscapeHTML(false)
	return c
}

// marshal returns v's encoding, valid until the next call.
func (c *canonical) marshal(v any) ([]byte, error) {
	c.buf.Reset()
	if err := c.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(c.buf.Bytes(), []byte("\n")), nil
}

// table interns encoded values: each distinct one is kept once, at the
// position it was first added.
type table struct {
	index map[string]int
	rows  [][]byte
}

func (t *table) add(b []byte) int {
	if i, ok := t.index[string(b)]; ok {
		return i
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	row := append([]byte(nil), b...)
	t.index[string(row)] = len(t.rows)
	t.rows = append(t.rows, row)
	return len(t.rows) - 1
}

func (t *table) write(out *bytes.Buffer, name string, first bool) bool {
	if len(t.rows) == 0 {
		return first
	}
	if !first {
		out.WriteByte(',')
	}
	out.WriteString(`"` + name + `":[`)
	for i, r := range t.rows {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(r)
	}
	out.WriteByte(']')
	return false
}

// marshalCompact writes c as a compact file (format 1.4 and later), with
// the checksum value empty: the plan's fields in order, "tables" right
// before "servers".
func marshalCompact(c *Plan) ([]byte, error) {
	enc := newCanonical()
	var comps, changes, steps table
	// refs holds every server's positions, one after the other: its
	// components, changes and steps, in that order (their counts are the
	// server's own).
	var refs []int
	// A list servers share (intern.go) is encoded once: its positions
	// are looked up by its first element.
	known := map[any][]int{}
	var scratch []byte
	add := func(t *table, s *Server, first any, n int, encode func(dst []byte, i int) ([]byte, error)) error {
		if n == 0 {
			return nil
		}
		if r, ok := known[first]; ok && len(r) == n {
			refs = append(refs, r...)
			return nil
		}
		start := len(refs)
		for i := 0; i < n; i++ {
			var err error
			if scratch, err = encode(scratch[:0], i); err != nil {
				return fmt.Errorf("encoding plan: server %s: %w", s.Address, err)
			}
			refs = append(refs, t.add(scratch))
		}
		known[first] = slices.Clone(refs[start:])
		return nil
	}
	for i := range c.Servers {
		s := &c.Servers[i]
		cs, chs, sts := s.Observed.Components, s.Changes, s.Steps
		if err := add(&comps, s, firstOf(cs), len(cs), func(dst []byte, i int) ([]byte, error) { return appendComponent(dst, &cs[i]), nil }); err != nil {
			return nil, err
		}
		if err := add(&changes, s, firstOf(chs), len(chs), func(dst []byte, i int) ([]byte, error) { return appendChange(dst, &chs[i]), nil }); err != nil {
			return nil, err
		}
		if err := add(&steps, s, firstOf(sts), len(sts), func(dst []byte, i int) ([]byte, error) { return appendStep(dst, &sts[i]) }); err != nil {
			return nil, err
		}
	}

	var out bytes.Buffer
	// Servers and tables dominate; the rest is the snapshot and the run.
	// A server takes 900 bytes in a plan like nexus-lab's: room for 1 KB
	// each spares a copy of the whole file when it outgrows its buffer
	// (and the twice as large buffer, at the CLI's peak).
	out.Grow(len(c.Servers)*1024 + 64<<10)
	rv := reflect.ValueOf(c).Elem()
	rt := rv.Type()
	out.WriteByte('{')
	first := true
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous {
			// encoding/json would inline its fields; this writer does not.
			return nil, fmt.Errorf("encoding plan: embedded field %s is not supported in the compact plan", f.Name)
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		v := rv.Field(i)
		if omitted(v, opts) {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		if name == "servers" {
			out.WriteString(`"tables":{`)
			t := comps.write(&out, "components", true)
			t = changes.write(&out, "changes", t)
			steps.write(&out, "steps", t)
			out.WriteString(`},"servers":`)
			if err := writeServers(&out, enc, c.Servers, refs); err != nil {
				return nil, err
			}
			continue
		}
		b, err := enc.marshal(v.Interface())
		if err != nil {
			return nil, fmt.Errorf("encoding plan: %s: %w", name, err)
		}
		out.WriteString(`"` + name + `":`)
		out.Write(b)
	}
	out.WriteString("}\n")
	// Room for the signature and checksum values, filled in place.
	out.Grow(256)
	return out.Bytes(), nil
}

// firstOf is a pointer to list's first element, nil for an empty list.
func firstOf[T any](list []T) *T {
	if len(list) == 0 {
		return nil
	}
	return &list[0]
}

func writeServers(out *bytes.Buffer, enc *canonical, servers []Server, refs []int) error {
	if servers == nil {
		out.WriteString("null")
		return nil
	}
	out.WriteByte('[')
	var w compactServer
	take := func(n int) []int {
		r := refs[:n:n]
		refs = refs[n:]
		if n == 0 {
			return nil
		}
		return r
	}
	for i := range servers {
		s := &servers[i]
		w.serverFields = serverFields(*s)
		w.Observed.observedFields = observedFields(s.Observed)
		w.Observed.Components = take(len(s.Observed.Components))
		w.Changes = take(len(s.Changes))
		w.Steps = take(len(s.Steps))
		b, err := enc.marshal(&w)
		if err != nil {
			return fmt.Errorf("encoding plan: server %s: %w", s.Address, err)
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(b)
	}
	out.WriteByte(']')
	return nil
}

// omitted reports whether encoding/json would leave out a field of value
// v with tag options opts (omitempty, omitzero).
func omitted(v reflect.Value, opts string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		switch o {
		case "omitempty":
			switch v.Kind() {
			case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
				if v.Len() == 0 {
					return true
				}
			case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
				reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
				if v.IsZero() {
					return true
				}
			}
		case "omitzero":
			if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
				if z.IsZero() {
					return true
				}
			} else if v.IsZero() {
				return true
			}
		}
	}
	return false
}

// decodeCompact reads a compact (1.4 and later) file whose checksum was verified.
func decodeCompact(file []byte, format string) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(file))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var w compactPlan
	// Room for every server up front (each starts with its address), so
	// the array is not grown and copied while it is read.
	w.Servers = make([]compactServer, 0, bytes.Count(file, []byte(`{"address":"`)))
	if err := dec.Decode(&w); err != nil {
		return nil, &DecodeError{Reason: "the plan does not match format " + format, Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &DecodeError{Reason: "unexpected data after the plan"}
	}
	p := Plan(w.planFields)
	if w.Servers != nil {
		p.Servers = make([]Server, len(w.Servers))
	}
	t := &w.Tables
	var comps refLists[providers.Component]
	var changes refLists[Change]
	var steps refLists[Step]
	for i := range w.Servers {
		ws := &w.Servers[i]
		s := &p.Servers[i]
		*s = Server(ws.serverFields)
		s.Observed = Observed(ws.Observed.observedFields)
		var err error
		if s.Observed.Components, err = comps.expand(ws.Observed.Components, t.Components, "component"); err == nil {
			if s.Changes, err = changes.expand(ws.Changes, t.Changes, "change"); err == nil {
				s.Steps, err = steps.expand(ws.Steps, t.Steps, "step")
			}
		}
		if err != nil {
			return nil, &DecodeError{Reason: fmt.Sprintf("the plan does not match format %s: server %s names %v, which its tables do not hold", format, s.Address, err)}
		}
		*ws = compactServer{}
	}
	return &p, nil
}
