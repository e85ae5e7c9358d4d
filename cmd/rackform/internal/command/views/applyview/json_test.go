package applyview_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
)

// The JSON outputs write an outcome and a status through their mirrors,
// which give the next actions as command lines: each mirror has every
// field of the executor's type, with its JSON name, in its order (so a
// field added to the executor's type is not lost from the output), and
// the same type but for "next".
func TestOutcomeJSONFields(t *testing.T) {
	for _, tc := range []struct{ exec, mirror any }{
		{executor.Outcome{}, applyview.OutcomeJSON{}},
		{executor.Status{}, applyview.StatusJSON{}},
	} {
		et, mt := reflect.TypeOf(tc.exec), reflect.TypeOf(tc.mirror)
		if et.NumField() != mt.NumField() {
			t.Errorf("%s has %d fields, %s %d", et, et.NumField(), mt, mt.NumField())
			continue
		}
		for i := range et.NumField() {
			ef, mf := et.Field(i), mt.Field(i)
			if ef.Name != mf.Name || ef.Tag.Get("json") != mf.Tag.Get("json") {
				t.Errorf("%s field %d is %s %q, %s's is %s %q", et, i, ef.Name, ef.Tag.Get("json"), mt, mf.Name, mf.Tag.Get("json"))
			}
			want := ef.Type
			if ef.Name == "Next" {
				want = reflect.TypeOf([]string(nil))
			}
			if mf.Type != want {
				t.Errorf("%s.%s is a %s, want %s", mt, mf.Name, mf.Type, want)
			}
		}
	}
}

// What the executor names by reference reaches `status -json` and the
// apply stream as the canonical commands those outputs always wrote.
func TestJSONWritesCommands(t *testing.T) {
	cont := executor.NextAction{Kind: executor.NextContinue}
	st := &executor.Status{V: 1, PlanSHA256: "ab",
		Next:     []executor.NextAction{cont, {Kind: executor.NextApprove, Gate: "stage.p.gate.g"}},
		Stranded: []executor.Stranded{{Server: "c/r/s1", State: executor.Failed, Recover: "then: " + executor.NextAction{Kind: executor.NextPlan, Target: "c/r/s1"}.Ref()}},
		Run:      &executor.Node{ID: "run", Kind: executor.KindRun, State: executor.State{Name: executor.Paused, Message: "x: done; run: " + cont.Ref()}},
	}
	applyview.CanonicalStatus(st)
	b, err := json.Marshal(applyview.NewStatusJSON(st))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"plan_sha256":"ab","next":["rackform continue","rackform approve stage.p.gate.g"],"stranded":[{"server":"c/r/s1","state":"failed","recover":"then: rackform plan -target c/r/s1 -out recover.plan \u0026\u0026 rackform apply recover.plan"}],"run":{"id":"run","kind":"run","state":"paused","message":"x: done; run: rackform continue"}}`
	if string(b) != want {
		t.Errorf("status JSON\n got %s\nwant %s", b, want)
	}

	var out strings.Builder
	j := applyview.NewJSON(&out)
	o := &executor.Outcome{Status: executor.OutcomePaused, Reason: executor.ReasonAfterRack, Message: "x: done; run: " + cont.Ref(), Next: []executor.NextAction{cont}}
	e := executor.Event{Type: "apply_ended", Outcome: o}
	j.Event(e)
	for _, w := range []string{`"message":"x: done; run: rackform continue","next":["rackform continue"]}`, `"@message":"Apply paused (after_rack); next: rackform continue"`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("apply stream lacks %s:\n%s", w, out.String())
		}
	}
	if strings.Contains(out.String(), "{{") || o.Message != "x: done; run: "+cont.Ref() {
		t.Errorf("a reference left in the stream, or the executor's outcome changed: %s, %q", out.String(), o.Message)
	}
}
