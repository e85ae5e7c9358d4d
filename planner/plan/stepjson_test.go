package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// TestStepJSONFields: stepJSON, the step as files write it, has every
// field of Step but Target, with the same type and tag, and Target as
// "version", "scheme" and "pattern": a field added to Step and not to
// the file form fails here rather than vanishing from plans.
func TestStepJSONFields(t *testing.T) {
	st, wt := reflect.TypeFor[Step](), reflect.TypeFor[stepJSON]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Name == "Target" {
			continue
		}
		w, ok := wt.FieldByName(f.Name)
		if !ok {
			t.Errorf("stepJSON has no field %s", f.Name)
			continue
		}
		if w.Type != f.Type || w.Tag != f.Tag {
			t.Errorf("stepJSON.%s is %s `%s`, Step.%s is %s `%s`", f.Name, w.Type, w.Tag, f.Name, f.Type, f.Tag)
		}
	}
	for _, name := range []string{"Version", "Scheme", "Pattern"} {
		if _, ok := wt.FieldByName(name); !ok {
			t.Errorf("stepJSON has no field %s", name)
		}
	}
	if got, want := wt.NumField(), st.NumField()-1+3; got != want {
		t.Errorf("stepJSON has %d fields, want %d (Step's but Target, and Version, Scheme, Pattern)", got, want)
	}
}

// TestStepJSONTarget: a step's target is written where plan files have
// always had it, and read back parsed: the pattern is compiled once and
// the target matches a decorated version.
func TestStepJSONTarget(t *testing.T) {
	const hpe = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)(?: \(.*\))?`
	tg, err := version.ParseTarget("U30 v2.54", version.Pattern, hpe)
	if err != nil {
		t.Fatal(err)
	}
	st := Step{Index: 2, Kind: StepUpdate, Component: "bios", Match: &providers.Match{ID: "BIOS"}, Target: tg, Image: "http://127.0.0.1:9/b.bin", After: []string{"a/r01/s0"},
		Expect: []providers.Expectation{{Component: "bios", Match: providers.Match{ID: "BIOS"}, Target: tg}}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"index":2,"kind":"update","component":"bios","match":{"id":"BIOS"},"version":"U30 v2.54","image":"http://127.0.0.1:9/b.bin","after":["a/r01/s0"],"scheme":"pattern","pattern":"(?P\u003cfamily\u003e[A-Z]\\d+) v(\\d+)\\.(\\d+)(?: \\(.*\\))?","expect":[{"component":"bios","match":{"id":"BIOS"},"version":"U30 v2.54","scheme":"pattern","pattern":"(?P\u003cfamily\u003e[A-Z]\\d+) v(\\d+)\\.(\\d+)(?: \\(.*\\))?"}],"estimate":"0s"}`
	if string(b) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", b, want)
	}
	var back Step
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Target.Equal(tg) || !back.Expect[0].Target.Equal(tg) {
		t.Errorf("read back %+v, %+v; want %+v", back.Target, back.Expect[0].Target, tg)
	}
	for _, got := range []version.Target{back.Target, back.Expect[0].Target} {
		if at, err := got.Matches("U30 v2.54 (03/01/2023)"); !at || err != nil {
			t.Errorf("read back target Matches = %v, %v; want true", at, err)
		}
	}
}

// TestDecodeBadTarget: a plan whose step records a scheme or pattern
// that cannot be used is refused, naming the step, rather than failing
// at apply's first check.
func TestDecodeBadTarget(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "format-1.6-signed.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"step scheme", `"scheme":"opaque","estimate":"10m0s"`, `"scheme":"nonsense","estimate":"10m0s"`, `step 1 (update tray_bmc)`},
		{"step pattern", `"scheme":"opaque","estimate":"10m0s"`, `"scheme":"pattern","pattern":"(","estimate":"10m0s"`, `step 1 (update tray_bmc)`},
		{"expectation", `"version":"sc.1.7.3-7","scheme":"opaque"}]`, `"version":"sc.1.7.3-7","scheme":"dotted"}]`, `step 2 (wait_ready): the expected version of tray_bmc`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(c.from)) {
				t.Fatalf("the golden has no %s", c.from)
			}
			_, err := Decode(reseal(t, bytes.Replace(good, []byte(c.from), []byte(c.to), 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Decode = %v; want an error naming %q", err, c.want)
			}
		})
	}
}

// A plan file writes a step's pattern, its expectations' and its image URL
// as it writes every other string, "<", ">" and "&" as they are: as plan
// files did before the target was one typed value (the compact writer
// does not escape HTML; a MarshalJSON that did would change the bytes a
// reviewer's hash is of).
func TestPlanFileWritesTargetsRaw(t *testing.T) {
	const hpe = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)`
	tg, err := version.ParseTarget("U30 v2.54", version.Pattern, hpe)
	if err != nil {
		t.Fatal(err)
	}
	p := samplePlan()
	var n int
	for i := range p.Servers {
		for j := range p.Servers[i].Steps {
			st := &p.Servers[i].Steps[j]
			if st.Kind != StepUpdate {
				continue
			}
			st.Target, st.Image = tg, "http://127.0.0.1:9/b.bin?a=1&b=2"
			st.Expect = []providers.Expectation{{Component: st.Component, Match: providers.Match{ID: "BIOS"}, Target: tg}}
			n++
		}
	}
	if n == 0 {
		t.Fatal("the sample plan has no update step")
	}
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"pattern":"(?P<family>[A-Z]\\d+) v(\\d+)\\.(\\d+)"`, `?a=1&b=2`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the plan file lacks %s", want)
		}
	}
	if got := strings.Count(string(b), `"pattern":"(?P<family>`); got < 2 {
		t.Errorf("%d patterns written raw, want the step's and its expectation's", got)
	}
	for _, bad := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the plan file escapes HTML: %s", bad)
		}
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range back.Servers {
		for _, st := range s.Steps {
			if st.Kind == StepUpdate && (!st.Target.Equal(tg) || st.Image != "http://127.0.0.1:9/b.bin?a=1&b=2") {
				t.Errorf("read back %+v", st)
			}
		}
	}
}
