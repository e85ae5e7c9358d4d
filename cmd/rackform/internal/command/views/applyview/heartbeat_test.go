package applyview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
)

func heartbeatPlan() *plan.Plan {
	b := executortest.NewBuilder(executortest.NewProvider())
	b.Stage("main").Group(b, "all").Cluster("c1").Scope(S{Name: "r01", Servers: 2})
	return b.Plan()
}

var stamp = regexp.MustCompile(`^\[(?:(\d+):)?(\d\d):(\d\d)\] `)

func elapsedOf(t *testing.T, line string) time.Duration {
	t.Helper()
	m := stamp.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("line without a time stamp: %q", line)
	}
	h, _ := strconv.Atoi(m[1])
	mm, _ := strconv.Atoi(m[2])
	ss, _ := strconv.Atoi(m[3])
	return time.Duration(h)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second
}

// Progress for CI (item 4): a two-hour apply on a non-terminal, whose one
// BMC task reports progress only every ten minutes, prints a line at least
// once a minute, and each heartbeat says what is in flight with its
// percent. The view's ticker is simulated by calling Tick every 5 s of
// fake time; nothing sleeps.
func TestPlainViewPrintsAtLeastOnceAMinute(t *testing.T) {
	p := heartbeatPlan()
	clock := executortest.NewClock(executortest.Epoch)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Now: clock.Now, Refresh: -1})
	server := p.Servers[0].Address
	emit := func(e executor.Event) {
		e.Time = clock.Now()
		v.Event(e)
	}
	emit(executor.Event{Type: "apply_started"})
	emit(executor.Event{Type: "step_started", Server: server, Op: "step:3", StepKind: "update", Component: "bios"})
	for i := 1; i <= 2*60*60/5; i++ {
		clock.Advance(5 * time.Second)
		if i%(10*60/5) == 0 {
			pct := i * 5 * 100 / (2 * 60 * 60)
			emit(executor.Event{Type: "step_progress", Server: server, Op: "step:3", StepKind: "update", Percent: &pct})
		}
		v.Tick(clock.Now())
	}
	emit(executor.Event{Type: "apply_ended", Outcome: &executor.Outcome{Status: executor.OutcomeCompleted, Message: "done"}})
	end := out.Len()
	clock.Advance(5 * time.Minute)
	v.Tick(clock.Now())
	v.Close()

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var prev time.Duration
	beats := 0
	for _, l := range lines {
		at := elapsedOf(t, l)
		if at-prev > time.Minute {
			t.Errorf("%s of silence before %q", at-prev, l)
		}
		prev = at
		if strings.Contains(l, "Still running") {
			beats++
			if !strings.Contains(l, server+" updating bios") {
				t.Errorf("heartbeat does not say what is in flight: %q", l)
			}
		}
	}
	if prev < 2*time.Hour {
		t.Errorf("the run's lines end at %s, want 2h", prev)
	}
	if beats < 100 {
		t.Errorf("%d heartbeats in 2h", beats)
	}
	if !strings.Contains(out.String(), server+": updating bios 50%") {
		t.Errorf("no task progress line at 50%%:\n%s", out.String())
	}
	if out.Len() != end {
		t.Errorf("a heartbeat after the run ended: %q", out.String()[end:])
	}
}

// The heartbeat is only for silence: while lines come, none is added, and
// the live (terminal) view never prints one.
func TestHeartbeatOnlyAfterSilence(t *testing.T) {
	p := heartbeatPlan()
	clock := executortest.NewClock(executortest.Epoch)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Now: clock.Now, Refresh: -1})
	v.Event(executor.Event{Type: "apply_started", Time: clock.Now()})
	clock.Advance(49 * time.Second)
	v.Tick(clock.Now())
	if strings.Contains(out.String(), "Still running") {
		t.Errorf("heartbeat before 50s of silence:\n%s", out.String())
	}
	clock.Advance(time.Second)
	v.Tick(clock.Now())
	if !strings.Contains(out.String(), "Still running") {
		t.Errorf("no heartbeat after 50s of silence:\n%s", out.String())
	}

	var live bytes.Buffer
	lv := applyview.New(&live, p, sha, applyview.Options{Live: true, Now: clock.Now, Refresh: -1})
	lv.Event(executor.Event{Type: "apply_started", Time: clock.Now()})
	clock.Advance(10 * time.Minute)
	lv.Tick(clock.Now())
	if strings.Contains(live.String(), "Still running") {
		t.Error("the live view printed a heartbeat")
	}
}

// Resize (item 4): after the terminal narrows, the live view counts the
// rows its picture takes at the new width, so the next redraw moves the
// cursor back over all of them instead of leaving wrapped rows behind.
func TestLiveViewFollowsResize(t *testing.T) {
	p := heartbeatPlan()
	clock := executortest.NewClock(executortest.Epoch)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Live: true, Now: clock.Now, Refresh: -1, Width: 200})
	v.Event(executor.Event{Type: "apply_started", Time: clock.Now()})
	up := regexp.MustCompile("\x1b\\[(\\d+)A")
	lastUp := func() int {
		m := up.FindAllStringSubmatch(out.String(), -1)
		if len(m) == 0 {
			t.Fatalf("no cursor-up in:\n%q", out.String())
		}
		n, _ := strconv.Atoi(m[len(m)-1][1])
		return n
	}
	v.Note("wide")
	wide := lastUp()
	v.SetWidth(20)
	v.Note("narrow")
	narrow := lastUp()
	if narrow <= wide {
		t.Errorf("at 20 columns the picture takes %d rows, at 200 %d: the resize was not followed", narrow, wide)
	}
	v.Close()
}

// ETA and elapsed survive continue (item 4): a view started for a run
// that began an hour ago and already finished one of three 40-minute
// racks counts elapsed time from the run's start and estimates the two
// racks left, not zero (the earlier racks' work is no measure of this
// process's pace).
func TestETAAndElapsedSurviveContinue(t *testing.T) {
	b := executortest.NewBuilder(executortest.NewProvider())
	b.Stage("main").Group(b, "all").Cluster("c1").
		Scope(S{Name: "r01", Servers: 2}).Scope(S{Name: "r02", Servers: 2}).Scope(S{Name: "r03", Servers: 2})
	p := b.Plan()
	var scopes []*executor.Node
	sc := p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes
	for i := range sc {
		sc[i].Estimate = plan.Duration(40 * time.Minute)
		n := &executor.Node{ID: sc[i].ID, Kind: executor.KindScope, State: executor.State{Name: executor.NotStarted}}
		if i == 0 {
			n.State.Name = executor.Completed
			n.Counts = &executor.Counts{Servers: 2, Eligible: 2, Succeeded: 2, Required: 2}
		}
		scopes = append(scopes, n)
	}
	clock := executortest.NewClock(executortest.Epoch)
	started := clock.Now().Add(-time.Hour)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Live: true, Now: clock.Now, Refresh: -1})
	v.Start(&executor.Status{StartedAt: &started, Run: &executor.Node{ID: "run", Kind: executor.KindRun, Children: scopes}})
	v.Event(executor.Event{Type: "apply_resumed", Time: clock.Now()})
	clock.Advance(time.Minute)
	v.Note("tick")
	v.Close()
	got := out.String()
	if !strings.Contains(got, "elapsed 1:01:00") {
		t.Errorf("elapsed does not count from the run's start:\n%s", got)
	}
	if !strings.Contains(got, "ETA ~1h20m") {
		t.Errorf("ETA is not the two racks left:\n%s", got)
	}
}

// Human state words on the terminal (item 4): the live view says states
// in words, never the internal tokens.
func TestHumanStateWords(t *testing.T) {
	for st, want := range map[executor.State]string{
		{Name: executor.Paused, Reason: executor.ReasonThreshold}: "paused: threshold breached",
		{Name: executor.Pending, Reason: executor.ReasonApproval}: "waiting: for approval",
		{Name: executor.NotStarted}:                               "not started",
		{Name: executor.Failed, Reason: executor.ReasonUnhealthy}: "failed: did not come back healthy",
		{Name: executor.Skipped, Reason: executor.ReasonAtTarget}: "skipped: already at target",
		{Name: executor.Completed}:                                "done",
	} {
		if got := applyview.HumanState(st); got != want {
			t.Errorf("HumanState(%v) = %q, want %q", st, got, want)
		}
	}
	live, err := os.ReadFile(filepath.Join("testdata", "live.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(live), "\n") {
		if strings.Contains(l, " running  ") && regexp.MustCompile(`not_started|\w\(\w+\)$`).MatchString(l) {
			t.Errorf("a live row shows an internal state token: %q", l)
		}
	}
}

// A quorum check waiting for a control-plane peer whose BMC hangs (issue
// 33, item 7): a line says it when the executor does, then the heartbeat
// says what the run waits for, on whom, and for how long, never "between
// steps"; once the check no longer waits (the member's state says so)
// the heartbeat no longer claims the wait.
func TestHeartbeatSaysTheQuorumWait(t *testing.T) {
	p := heartbeatPlan()
	clock := executortest.NewClock(executortest.Epoch)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Now: clock.Now, Refresh: -1})
	member, peer := p.Servers[0].Address, p.Servers[1].Address
	v.Event(executor.Event{Type: "apply_started", Time: clock.Now()})
	since := clock.Now()
	what := "waiting for quorum: the control-plane member " + peer + " has not answered since 12:00:00 UTC; it is observed before " + member + " goes down, and if its BMC does not answer the run pauses for quorum"
	clock.Advance(30 * time.Second) // the executor says a wait of 30 s
	wait := executor.Event{Type: "quorum_wait", Server: member, Target: peer, Since: &since, Time: clock.Now(), Message: what}
	v.Event(wait)
	var js bytes.Buffer
	applyview.NewJSON(&js).Event(wait)
	applyview.NewJSON(&js).Event(executor.Event{Type: "server_running", ID: member, Kind: executor.KindServer, State: executor.Running, Time: clock.Now(), Message: what})
	if n := strings.Count(js.String(), `"type":"apply_progress"`); n != 2 {
		t.Errorf("%d of 2 JSON lines are apply_progress (server_running is no new start): %s", n, js.String())
	}
	for _, w := range []string{`"@level":"warn"`, `"type":"apply_progress"`, `"type":"quorum_wait"`, `"since":"2026-11-21T12:00:00Z"`, `"target":"` + peer + `"`} {
		if !strings.Contains(js.String(), w) {
			t.Errorf("JSON line lacks %s: %s", w, js.String())
		}
	}
	clock.Advance(time.Minute + 40*time.Second)
	v.Tick(clock.Now())
	t.Log(out.String())
	if line := "  " + member + ": " + what; !strings.Contains(out.String(), line) {
		t.Errorf("no line says the wait %q:\n%s", line, out.String())
	}
	want := "1 server in flight: " + member + " waiting for quorum: the control-plane member " + peer + " has not answered for 2m10s; "
	if got := out.String(); !strings.Contains(got, want) || strings.Contains(got, "between steps") {
		t.Errorf("heartbeat does not say %q:\n%s", want, got)
	}
	out.Reset()
	// The check no longer waits: the member's state says so.
	v.Event(executor.Event{Type: "server_running", ID: member, Kind: executor.KindServer, State: executor.Running, Time: clock.Now()})
	clock.Advance(time.Minute)
	v.Tick(clock.Now())
	if got := out.String(); strings.Contains(got, "waiting for quorum") {
		t.Errorf("heartbeat still claims the quorum wait after the check ended:\n%s", got)
	}
}
