package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemasDir holds the JSON Schemas of every machine-readable output
// (docs/json.md explains them).
var schemasDir = filepath.Join("..", "..", "docs", "schemas")

// schemaKinds maps a kind of output to its schema file and whether it is a
// stream of JSON lines (each line one document) or one document.
var schemaKinds = map[string]struct {
	file  string
	lines bool
}{
	"plan-json": {"plan-json.schema.json", false}, // show -json
	"ui-events": {"ui-events.schema.json", true},  // plan -json, apply -json, -json-into
	"plan-file": {"plan-file.schema.json", false}, // the plan file (plan -out)
	"validate":  {"validate.schema.json", false},  // validate -json
	"status":    {"status.schema.json", false},    // status -json
	"version":   {"version.schema.json", false},   // version -json
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[string]*jsonschema.Schema{}
)

// compiledSchema compiles a schema of docs/schemas once, asserting
// formats (date-time) as well as structure.
func compiledSchema(kind string) (*jsonschema.Schema, bool, error) {
	k, ok := schemaKinds[kind]
	if !ok {
		return nil, false, fmt.Errorf("no schema for %q", kind)
	}
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s := schemaCache[kind]; s != nil {
		return s, k.lines, nil
	}
	abs, err := filepath.Abs(filepath.Join(schemasDir, k.file))
	if err != nil {
		return nil, false, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(abs)
	if err != nil {
		return nil, false, err
	}
	schemaCache[kind] = s
	return s, k.lines, nil
}

// validateOutput checks data (one document, or JSON lines) against the
// schema of kind; it returns the first violation with its line.
func validateOutput(kind string, data []byte) error {
	s, lines, err := compiledSchema(kind)
	if err != nil {
		return err
	}
	docs := [][]byte{data}
	if lines {
		docs = nil
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				docs = append(docs, append([]byte(nil), sc.Bytes()...))
			}
		}
		if len(docs) == 0 {
			return fmt.Errorf("no lines to validate")
		}
	}
	for i, d := range docs {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(d))
		if err != nil {
			return fmt.Errorf("line %d is not JSON: %v", i+1, err)
		}
		if err := s.Validate(inst); err != nil {
			return fmt.Errorf("line %d does not match %s: %v\n%s", i+1, kind, err, d)
		}
	}
	return nil
}

// cmdSchema is the script command `schema KIND FILE...`: each file (or
// "stdout", the last command's output) validates against the JSON Schema
// of KIND in docs/schemas. `! schema` expects a violation.
func cmdSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: schema KIND FILE...")
	}
	for _, f := range args[1:] {
		var data []byte
		if f == "stdout" {
			data = []byte(ts.ReadFile("stdout"))
		} else {
			var err error
			data, err = os.ReadFile(ts.MkAbs(f))
			ts.Check(err)
		}
		err := validateOutput(args[0], data)
		switch {
		case err != nil && !neg:
			ts.Fatalf("%s: %v", f, err)
		case err == nil && neg:
			ts.Fatalf("%s matches the %s schema, want a violation", f, args[0])
		case err != nil:
			ts.Logf("%s: violation as expected: %.300s", f, err)
		}
	}
}

// TestSchemasMatchTheViewGoldens: the outputs the view tests pin for each
// example (show -json, plan -json, apply -json) match their schemas.
func TestSchemasMatchTheViewGoldens(t *testing.T) {
	views := filepath.Join("internal", "command", "views")
	for kind, glob := range map[string]string{
		"plan-json": filepath.Join(views, "planview", "testdata", "*.show.json"),
		"ui-events": filepath.Join(views, "*", "testdata", "*.jsonl"),
	} {
		files, _ := filepath.Glob(glob)
		if len(files) < 3 {
			t.Fatalf("%s: only %d goldens match %s", kind, len(files), glob)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateOutput(kind, data); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

// TestSchemasRejectWhatTheyShould: the schemas are not so loose that
// anything passes. Each case breaks a real golden in one way the docs
// promise cannot happen, and validation must fail.
func TestSchemasRejectWhatTheyShould(t *testing.T) {
	show, err := os.ReadFile(filepath.Join("internal", "command", "views", "planview", "testdata", "fleet.show.json"))
	if err != nil {
		t.Fatal(err)
	}
	events, err := os.ReadFile(filepath.Join("internal", "command", "views", "applyview", "testdata", "events.golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	firstEvent := strings.SplitN(string(events), "\n", 2)[0]
	rehearsed, err := os.ReadFile(filepath.Join("internal", "command", "views", "rehearseview", "testdata", "fleet.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(rehearsed)), "\n")
	schedule := lines[len(lines)-1]
	cases := []struct {
		name, kind, doc, old, new string
	}{
		{"an empty list left out", "plan-json", string(show), `"problems": [],`, ``},
		{"servers as a list instead of a map", "plan-json", string(show), `"servers": {`, `"servers": [], "x": {`},
		{"a property the docs do not explain", "plan-json", string(show), `"format_version": "1.2",`, `"format_version": "1.2", "surprise": 1,`},
		{"a duration as a number", "plan-json", string(show), `"after_wait": "1h0m0s"`, `"after_wait": 3600`},
		{"another major format version", "plan-json", string(show), `"format_version": "1.2"`, `"format_version": "2.0"`},
		{"an estimate from nowhere", "plan-json", string(show), `"estimate_source": "default"`, `"estimate_source": "guessed"`},
		{"the history left out", "plan-json", string(show), `"history": null,`, ``},
		{"the old apply envelope", "ui-events", `{"v":1,"time":"2026-11-21T12:00:00Z","type":"apply_started"}`, ``, ``},
		{"another module", "ui-events", firstEvent, `"@module":"rackform.ui"`, `"@module":"terraform.ui"`},
		{"a timestamp that is not one", "ui-events", firstEvent, `"@timestamp":"2026-11-21T12:00:00.000000Z"`, `"@timestamp":"noon"`},
		{"an unknown level", "ui-events", firstEvent, `"@level":"info"`, `"@level":"chatty"`},
		{"an apply message without its event", "ui-events", firstEvent, `,"event":{`, `,"evt":{`},
		{"a schedule without its bars", "ui-events", schedule, `"bars":[`, `"barz":[`},
		{"a schedule's mark of an unknown kind", "ui-events", schedule, `"kind":"gate"`, `"kind":"gait"`},
		{"a schedule's total as a number", "ui-events", schedule, `"total":"`, `"total":1,"x":"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := c.doc
			if c.old != "" {
				if !strings.Contains(doc, c.old) {
					t.Fatalf("the golden no longer holds %q: update the case", c.old)
				}
				doc = strings.Replace(doc, c.old, c.new, 1)
			}
			if err := validateOutput(c.kind, []byte(doc)); err == nil {
				t.Errorf("the %s schema accepts a document with %s", c.kind, c.name)
			}
		})
	}
	// And the unbroken documents pass, so each failure above is the break.
	if err := validateOutput("plan-json", show); err != nil {
		t.Error(err)
	}
	if err := validateOutput("ui-events", []byte(firstEvent)); err != nil {
		t.Error(err)
	}
	if err := validateOutput("ui-events", []byte(schedule)); err != nil {
		t.Error(err)
	}
}
