package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/history"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

var epoch = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// fleetServer is a server of a test run: its identity and how long each
// of its steps takes (0: the step is not in its plan).
type fleetServer struct {
	addr                string
	vendor, model       string
	shutdown, update    time.Duration
	reset, waitReady    time.Duration
	drain, drainTimeout time.Duration
}

// steps are the server's plan steps: [drain,] shutdown, update bios,
// reset, wait_ready.
func (s fleetServer) steps() []plan.Step {
	var out []plan.Step
	add := func(st plan.Step) {
		st.Index = len(out) + 1
		out = append(out, st)
	}
	if s.drain > 0 {
		add(plan.Step{Kind: plan.StepDrain, Timeout: plan.Duration(s.drainTimeout)})
	}
	add(plan.Step{Kind: plan.StepShutdown})
	add(plan.Step{Kind: plan.StepUpdate, Component: "bios", Target: version.Target{Version: "2.0"}})
	add(plan.Step{Kind: plan.StepReset, ResetType: "On"})
	add(plan.Step{Kind: plan.StepWaitReady})
	return out
}

func (s fleetServer) durations() []time.Duration {
	var out []time.Duration
	if s.drain > 0 {
		out = append(out, s.drain)
	}
	return append(out, s.shutdown, s.update, s.reset, s.waitReady)
}

// planFile encodes a plan of servers (only what history reads is filled).
func planFile(t testing.TB, name string, servers []fleetServer) ([]byte, string) {
	t.Helper()
	p := &plan.Plan{FormatVersion: plan.FormatVersion, CreatedAt: epoch, NotAfter: epoch.Add(time.Hour), Run: plan.Run{Name: name}}
	for _, s := range servers {
		p.Servers = append(p.Servers, plan.Server{Address: s.addr, Action: plan.ActionUpgrade,
			Identity: providers.Identity{Manufacturer: s.vendor, Model: s.model}, Steps: s.steps()})
	}
	b, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return b, plan.SHA256(b)
}

// journal is a run's records, written as the engine writes them.
type journal struct {
	t    testing.TB
	at   time.Time
	recs [][]byte
}

func (j *journal) add(r executor.Record) {
	r.V = executor.JournalVersion
	if r.Time.IsZero() {
		r.Time = j.at
	}
	b, err := json.Marshal(r)
	if err != nil {
		j.t.Fatal(err)
	}
	j.recs = append(j.recs, b)
}

// run journals every server's steps one after the other, each lasting
// its duration, after a run_started, with the other records the engine
// writes around them (states, the pre-flight observation, task URIs).
func (j *journal) run(servers []fleetServer) {
	j.add(executor.Record{Type: executor.RecordRunStarted, PlanSHA256: strings.Repeat("ab", 32), PID: 1})
	j.add(executor.Record{Type: "state", ID: "run", State: "running"})
	for _, s := range servers {
		j.add(executor.Record{Type: "state", ID: s.addr, State: "running"})
		j.add(executor.Record{Type: "observed", Server: s.addr, Fingerprint: "57caad405d0c5376"})
		for i, d := range s.durations() {
			op := fmt.Sprintf("step:%d", i+1)
			st := s.steps()[i]
			j.add(executor.Record{Type: executor.RecordStepStarted, Server: s.addr, Op: op, Kind: string(st.Kind)})
			if st.Kind == plan.StepUpdate {
				j.add(executor.Record{Type: "task_uri", Server: s.addr, Op: op, TaskURI: "/redfish/v1/TaskService/Tasks/1"})
			}
			j.at = j.at.Add(d)
			j.add(executor.Record{Type: executor.RecordStepDone, Server: s.addr, Op: op, Message: string(st.Kind) + " ok"})
		}
		j.add(executor.Record{Type: "state", ID: s.addr, State: "completed"})
	}
}

// store saves a run (its plan and journal) in the state directory dir.
func store(t testing.TB, dir string, file []byte, j *journal) string {
	t.Helper()
	ctx := context.Background()
	d, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sha := plan.SHA256(file)
	if err := d.SavePlan(ctx, sha, file); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append(ctx, sha, j.recs...); err != nil {
		t.Fatal(err)
	}
	// Runs are ordered by when their journal was last written.
	os.Chtimes(filepath.Join(dir, "journal", sha+".jsonl"), j.at, j.at)
	return sha
}

func load(t *testing.T, opts history.Options, paths ...string) *history.Estimates {
	t.Helper()
	var sources []history.Source
	for _, p := range paths {
		s, err := history.OpenStateDir(p)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, s)
	}
	e, err := history.Load(context.Background(), sources, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func minutes(m int) time.Duration { return time.Duration(m) * time.Minute }

func key(kind plan.StepKind, component, vendor, model string) plan.EstimateKey {
	return plan.EstimateKey{Kind: kind, Component: component, Manufacturer: vendor, Model: model}
}

// Each class gets the median and p90 of its own samples when it has
// enough, else its vendor's, else any server's; every sample counts at
// each level.
func TestLoadFallsBackModelVendorKind(t *testing.T) {
	servers := []fleetServer{
		{addr: "c/r1/a1", vendor: "Contoso", model: "R640", shutdown: minutes(1), update: minutes(10), reset: minutes(1), waitReady: minutes(5)},
		{addr: "c/r1/a2", vendor: "Contoso", model: "R640", shutdown: minutes(1), update: minutes(12), reset: minutes(1), waitReady: minutes(6)},
		{addr: "c/r1/a3", vendor: "Contoso", model: "R640", shutdown: minutes(2), update: minutes(11), reset: minutes(1), waitReady: minutes(7)},
		{addr: "c/r2/b1", vendor: "Contoso", model: "R750", shutdown: minutes(1), update: minutes(20), reset: minutes(2), waitReady: minutes(8)},
		{addr: "c/r2/b2", vendor: "Contoso", model: "R750", shutdown: minutes(1), update: minutes(21), reset: minutes(2), waitReady: minutes(9)},
		{addr: "c/r3/f1", vendor: "Fabrikam", model: "X1", shutdown: minutes(3), update: minutes(30), reset: minutes(3), waitReady: minutes(4)},
	}
	dir := t.TempDir()
	file, _ := planFile(t, "one", servers)
	j := &journal{t: t, at: epoch}
	j.run(servers)
	store(t, dir, file, j)
	e := load(t, history.Options{}, dir)
	if e.Runs() != 1 || len(e.Skipped()) != 0 {
		t.Fatalf("runs %d, skipped %v", e.Runs(), e.Skipped())
	}
	for _, tc := range []struct {
		ask  plan.EstimateKey
		want plan.Learned
	}{
		// Three R640 samples: the model's own.
		{key(plan.StepUpdate, "bios", "Contoso", "R640"),
			plan.Learned{Key: key(plan.StepUpdate, "bios", "Contoso", "R640"), Samples: 3, Runs: 1, Median: plan.Duration(minutes(11)), P90: plan.Duration(minutes(12))}},
		// Two R750 samples: Contoso's five (10, 11, 12, 20, 21).
		{key(plan.StepUpdate, "bios", "Contoso", "R750"),
			plan.Learned{Key: key(plan.StepUpdate, "bios", "Contoso", ""), Samples: 5, Runs: 1, Median: plan.Duration(minutes(12)), P90: plan.Duration(minutes(21))}},
		// One Fabrikam sample: every server's six.
		{key(plan.StepUpdate, "bios", "Fabrikam", "X1"),
			plan.Learned{Key: key(plan.StepUpdate, "bios", "", ""), Samples: 6, Runs: 1, Median: plan.Duration(minutes(12)), P90: plan.Duration(minutes(30))}},
		// A model never seen, of a vendor seen.
		{key(plan.StepReset, "", "Contoso", "R999"),
			plan.Learned{Key: key(plan.StepReset, "", "Contoso", ""), Samples: 5, Runs: 1, Median: plan.Duration(minutes(1)), P90: plan.Duration(minutes(2))}},
		// wait_ready after a reset is its own class.
		{plan.EstimateKey{Kind: plan.StepWaitReady, Manufacturer: "Contoso", Model: "R640", AfterBoot: true},
			plan.Learned{Key: plan.EstimateKey{Kind: plan.StepWaitReady, Manufacturer: "Contoso", Model: "R640", AfterBoot: true}, Samples: 3, Runs: 1, Median: plan.Duration(minutes(6)), P90: plan.Duration(minutes(7))}},
	} {
		got, ok := e.Lookup(tc.ask)
		if !ok {
			t.Errorf("Lookup(%s): nothing learned", tc.ask)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Lookup(%s) (-want +got):\n%s", tc.ask, diff)
		}
	}
	// Nothing of these was measured: the caller keeps its defaults.
	for _, k := range []plan.EstimateKey{
		key(plan.StepUpdate, "bmc", "Contoso", "R640"),
		key(plan.StepReimage, "runtime", "", ""),
		{Kind: plan.StepWaitReady, Manufacturer: "Contoso", Model: "R640"}, // without a boot
	} {
		if got, ok := e.Lookup(k); ok {
			t.Errorf("Lookup(%s) = %+v, want nothing", k, got)
		}
	}
	// With a higher bar the R640's three samples are not enough either.
	strict := load(t, history.Options{MinSamples: 4}, dir)
	if got, _ := strict.Lookup(key(plan.StepUpdate, "bios", "Contoso", "R640")); got.Key.Level() != plan.LevelVendor {
		t.Errorf("with 4 samples required, R640 used %s", got.Key)
	}
}

// Only steps that ran once and succeeded are measured.
func TestLoadMeasuresOnlyCleanSteps(t *testing.T) {
	s := fleetServer{addr: "c/r1/a1", vendor: "Contoso", model: "R640", drain: minutes(20), drainTimeout: minutes(20),
		shutdown: minutes(1), update: minutes(10), reset: minutes(1), waitReady: minutes(5)}
	others := []fleetServer{s, s, s}
	for i := range others {
		others[i].addr = fmt.Sprintf("c/r1/a%d", i+2)
		others[i].drain = minutes(2)
	}
	all := append([]fleetServer{s}, others...)
	dir := t.TempDir()
	file, _ := planFile(t, "one", all)
	j := &journal{t: t, at: epoch}
	j.run(others) // 3 clean servers: every step measured
	// a1: the drain ran out its 20m timeout and proceeded (step_done);
	// the shutdown failed once (step_failed) and its retry is not
	// measured either; the update was started twice (a crash before its
	// task was recorded); the reset is resumed by another apply; a
	// remediation op and a stray step_done are not plan steps.
	rec := func(typ, op string, d time.Duration) {
		j.add(executor.Record{Type: typ, Server: s.addr, Op: op})
		j.at = j.at.Add(d)
	}
	rec(executor.RecordStepStarted, "step:1", minutes(20))
	rec(executor.RecordStepDone, "step:1", 0)
	rec(executor.RecordStepStarted, "step:2", minutes(1))
	rec(executor.RecordStepFailed, "step:2", 0)
	rec(executor.RecordStepStarted, "step:2", minutes(1))
	rec(executor.RecordStepDone, "step:2", 0)
	rec(executor.RecordStepStarted, "step:3", minutes(3))
	rec(executor.RecordRunStarted, "", 0)
	rec(executor.RecordStepStarted, "step:3", minutes(10))
	rec(executor.RecordStepDone, "step:3", 0)
	rec(executor.RecordStepStarted, "step:4", minutes(50))
	rec(executor.RecordRunStarted, "", 0)
	rec(executor.RecordStepDone, "step:4", 0)
	rec(executor.RecordStepStarted, "remedy:1:reboot", minutes(40))
	rec(executor.RecordStepDone, "remedy:1:reboot", 0)
	rec(executor.RecordStepDone, "step:5", 0)
	store(t, dir, file, j)

	e := load(t, history.Options{MinSamples: 1}, dir)
	for kind, want := range map[plan.StepKind]plan.Learned{
		plan.StepDrain:    {Key: key(plan.StepDrain, "", "Contoso", "R640"), Samples: 3, Runs: 1, Median: plan.Duration(minutes(2)), P90: plan.Duration(minutes(2))},
		plan.StepShutdown: {Key: key(plan.StepShutdown, "", "Contoso", "R640"), Samples: 3, Runs: 1, Median: plan.Duration(minutes(1)), P90: plan.Duration(minutes(1))},
		plan.StepUpdate:   {Key: key(plan.StepUpdate, "bios", "Contoso", "R640"), Samples: 3, Runs: 1, Median: plan.Duration(minutes(10)), P90: plan.Duration(minutes(10))},
		plan.StepReset:    {Key: key(plan.StepReset, "", "Contoso", "R640"), Samples: 3, Runs: 1, Median: plan.Duration(minutes(1)), P90: plan.Duration(minutes(1))},
	} {
		k := key(kind, want.Key.Component, "Contoso", "R640")
		got, _ := e.Lookup(k)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", kind, diff)
		}
	}
}

// Only the most recent runs are read, newest first, each once however
// many sources hold it; a run that cannot be read is said, not fatal.
func TestLoadReadsTheLastRuns(t *testing.T) {
	dir, copyDir := t.TempDir(), t.TempDir()
	var shas []string
	for i, update := range []time.Duration{minutes(10), minutes(20), minutes(30)} {
		servers := []fleetServer{
			{addr: "c/r1/a1", vendor: "Contoso", model: "R640", shutdown: minutes(1), update: update, reset: minutes(1), waitReady: minutes(5)},
		}
		file, _ := planFile(t, fmt.Sprintf("run%d", i), servers)
		j := &journal{t: t, at: epoch.Add(time.Duration(i) * 24 * time.Hour)}
		j.run(servers)
		shas = append(shas, store(t, dir, file, j))
		store(t, copyDir, file, j) // the same runs, archived
	}
	opts := history.Options{Runs: 2, MinSamples: 1}
	e := load(t, opts, dir, copyDir)
	if e.Runs() != 2 {
		t.Errorf("read %d runs, want the 2 newest", e.Runs())
	}
	got, _ := e.Lookup(key(plan.StepUpdate, "bios", "Contoso", "R640"))
	want := plan.Learned{Key: key(plan.StepUpdate, "bios", "Contoso", "R640"), Samples: 2, Runs: 2, Median: plan.Duration(minutes(20)), P90: plan.Duration(minutes(30))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("update from the two newest runs (-want +got):\n%s", diff)
	}

	// The newest run's plan is gone: it is skipped, with the reason, and
	// the next one is read instead.
	if err := os.Remove(filepath.Join(dir, "plans", shas[2]+".json")); err != nil {
		t.Fatal(err)
	}
	e = load(t, opts, dir)
	if e.Runs() != 2 || len(e.Skipped()) != 1 || !strings.Contains(e.Skipped()[0], "the run of plan "+shas[2][:12]+" in the state directory "+dir+" was not read") {
		t.Errorf("runs %d, skipped %q", e.Runs(), e.Skipped())
	}
	if got, _ := e.Lookup(key(plan.StepUpdate, "bios", "Contoso", "R640")); got.Median != plan.Duration(minutes(10)) {
		t.Errorf("median %s, want the two older runs' 10m", got.Median)
	}

	// A plan that does not hash to its name is not trusted.
	if err := os.WriteFile(filepath.Join(dir, "plans", shas[1]+".json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	e = load(t, history.Options{Runs: 1, MinSamples: 1}, dir)
	if len(e.Skipped()) != 2 || !strings.Contains(e.Skipped()[1], "its plan file does not hash to its name") {
		t.Errorf("skipped %q", e.Skipped())
	}
}

func TestNoHistory(t *testing.T) {
	var none *history.Estimates
	if _, ok := none.Lookup(key(plan.StepUpdate, "bios", "", "")); ok || none.Runs() != 0 {
		t.Error("a nil Estimates learned something")
	}
	if _, err := history.OpenStateDir(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing state directory: %v", err)
	}
	e, err := history.Load(context.Background(), nil, history.Options{})
	if err != nil || e.Runs() != 0 || len(e.Classes()) != 0 {
		t.Errorf("no sources: %v %v", e, err)
	}
}

// A journal written by a newer rackform is not guessed at: its run is
// left out, saying why.
func TestLoadRefusesNewerJournals(t *testing.T) {
	servers := []fleetServer{{addr: "c/r1/a1", vendor: "Contoso", model: "R640", shutdown: minutes(1), update: minutes(10), reset: minutes(1), waitReady: minutes(5)}}
	dir := t.TempDir()
	file, _ := planFile(t, "one", servers)
	j := &journal{t: t, at: epoch}
	j.run(servers)
	j.recs = append(j.recs, []byte(`{"v":2,"time":"2026-11-21T13:00:00Z","type":"step_started","server":"c/r1/a1","op":"step:9"}`))
	store(t, dir, file, j)
	e := load(t, history.Options{}, dir)
	if e.Runs() != 0 || len(e.Skipped()) != 1 || !strings.Contains(e.Skipped()[0], "record 15: journal record version 2 is not supported (this rackform reads up to 1)") {
		t.Errorf("runs %d, skipped %q", e.Runs(), e.Skipped())
	}
}
