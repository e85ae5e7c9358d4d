package uijson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLineEnvelopeFirst: every line is one JSON object with the envelope
// of Terraform's machine-readable UI first, then the payload's
// properties; a message without a payload is the envelope alone.
func TestLineEnvelopeFirst(t *testing.T) {
	var b bytes.Buffer
	w := New(&b)
	w.Now = func() time.Time { return time.Date(2026, 7, 1, 12, 0, 0, 1500, time.UTC) }
	if err := w.Version("1.2.3"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(TypeLog, LevelWarn, "a <note> & more", time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(TypeLog, LevelInfo, "empty payload", time.Time{}, struct{}{}); err != nil {
		t.Fatal(err)
	}
	want := `{"@level":"info","@message":"rackform 1.2.3","@module":"rackform.ui","@timestamp":"2026-07-01T12:00:00.000001Z","type":"version","rackform":"1.2.3","ui":"` + Version + `"}
{"@level":"warn","@message":"a <note> & more","@module":"rackform.ui","@timestamp":"2026-07-01T12:00:00.000001Z","type":"log"}
{"@level":"info","@message":"empty payload","@module":"rackform.ui","@timestamp":"2026-07-01T12:00:00.000001Z","type":"log"}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}

// TestLineRefusesANonObjectPayload: a payload that is not an object
// cannot be spliced into the envelope, and nothing is written.
func TestLineRefusesANonObjectPayload(t *testing.T) {
	var b bytes.Buffer
	if err := New(&b).Write(TypeLog, LevelInfo, "x", time.Now(), []string{"a"}); err == nil || b.Len() > 0 {
		t.Errorf("a list payload: err %v, wrote %q", err, b.String())
	}
}
