package plugin

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// fill sets every exported field of v (a pointer) to a distinct non-zero
// value, recursively, so a field the wire mapping forgets cannot survive a
// round trip unnoticed — including fields added to the contract later.
func fill(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(t, v.Elem(), path)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeOf(time.Time{}):
			v.Set(reflect.ValueOf(time.Date(2026, 11, 25, 22, 30, 0, 123, time.UTC)))
			return
		case reflect.TypeOf(version.Target{}):
			// A target the wire can carry: read with its scheme and
			// pattern, all three set.
			tg, err := version.ParseTarget("U30 v2.54", version.Pattern, `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)(?: \(.*\))?`)
			if err != nil {
				t.Fatal(err)
			}
			v.Set(reflect.ValueOf(tg))
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			fill(t, v.Field(i), path+"."+f.Name)
		}
	case reflect.String:
		v.SetString("v" + path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(len(path)))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), path+"["+string(rune('0'+i))+"]")
		}
		v.Set(s)
	default:
		t.Fatalf("fill: %s has kind %s; teach the test about it", path, v.Kind())
	}
}

// TestConvertRoundTripEveryField checks that every field of the contract
// (Target with System and Updates, Observation with Outcome, System,
// Systems, Identity and Updates, Component Source/Shared, Step
// Method/TransferProtocol/Targets/SHA256, Expectation Scheme/Pattern)
// crosses the gRPC wire and comes back equal: a field dropped by the
// mapping fails here.
func TestConvertRoundTripEveryField(t *testing.T) {
	same := func(what string, sent, received any) {
		t.Helper()
		if !cmp.Equal(sent, received) {
			t.Errorf("%s lost fields over the wire (-sent +received):\n%s", what, cmp.Diff(sent, received))
		}
	}
	var target providers.Target
	fill(t, reflect.ValueOf(&target), "Target")
	same("Target", target, targetFromProto(targetToProto(target)))

	var obs providers.Observation
	fill(t, reflect.ValueOf(&obs), "Observation")
	obs.Diagnostics = providers.Diagnostics{{Severity: providers.Warning, Summary: "s", Detail: "d", Server: "x"}}
	same("Observation", &obs, observationFromProto(observationToProto(&obs)))

	var step providers.Step
	fill(t, reflect.ValueOf(&step), "Step")
	got, err := stepFromProto(stepToProto(step))
	if err != nil {
		t.Fatal(err)
	}
	same("Step", step, got)

	var res providers.ApplyResult
	fill(t, reflect.ValueOf(&res), "ApplyResult")
	res.Observation.Diagnostics = obs.Diagnostics
	same("ApplyResult", &res, applyResultFromProto(applyResultToProto(&res)))

	var prog providers.Progress
	fill(t, reflect.ValueOf(&prog), "Progress")
	same("Progress", &prog, progressFromProto(progressToProto(&prog)))

	var ts providers.TaskStatus
	fill(t, reflect.ValueOf(&ts), "TaskStatus")
	same("TaskStatus", &ts, taskStatusFromProto(taskStatusToProto(&ts)))
}
