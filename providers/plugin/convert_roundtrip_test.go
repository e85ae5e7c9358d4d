package plugin

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	var target providers.Target
	fill(t, reflect.ValueOf(&target), "Target")
	if got := targetFromProto(targetToProto(target)); !cmp.Equal(target, got) {
		t.Errorf("Target lost fields over the wire (-sent +received):\n%s", cmp.Diff(target, got))
	}

	var obs providers.Observation
	fill(t, reflect.ValueOf(&obs), "Observation")
	obs.Diagnostics = providers.Diagnostics{{Severity: providers.Warning, Summary: "s", Detail: "d", Server: "x"}}
	if got := observationFromProto(observationToProto(&obs)); !cmp.Equal(&obs, got) {
		t.Errorf("Observation lost fields over the wire (-sent +received):\n%s", cmp.Diff(&obs, got))
	}

	var step providers.Step
	fill(t, reflect.ValueOf(&step), "Step")
	if got := stepFromProto(stepToProto(step)); !cmp.Equal(step, got) {
		t.Errorf("Step lost fields over the wire (-sent +received):\n%s", cmp.Diff(step, got))
	}

	var res providers.ApplyResult
	fill(t, reflect.ValueOf(&res), "ApplyResult")
	res.Observation.Diagnostics = obs.Diagnostics
	if got := applyResultFromProto(applyResultToProto(&res)); !cmp.Equal(&res, got) {
		t.Errorf("ApplyResult lost fields over the wire (-sent +received):\n%s", cmp.Diff(&res, got))
	}

	var prog providers.Progress
	fill(t, reflect.ValueOf(&prog), "Progress")
	if got := progressFromProto(progressToProto(&prog)); !cmp.Equal(&prog, got) {
		t.Errorf("Progress lost fields (-sent +received):\n%s", cmp.Diff(&prog, got))
	}
	var ts providers.TaskStatus
	fill(t, reflect.ValueOf(&ts), "TaskStatus")
	if got := taskStatusFromProto(taskStatusToProto(&ts)); !cmp.Equal(&ts, got) {
		t.Errorf("TaskStatus lost fields (-sent +received):\n%s", cmp.Diff(&ts, got))
	}
}
