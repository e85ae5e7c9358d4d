package rehearsal

import (
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// oneCluster: a control plane of three members and a spare (serial), then
// one compute rack of two, with the planner's default remediation
// triggers.
func oneCluster() *plan.Plan {
	b := executortest.NewBuilder(nil)
	b.Stage("all").Group(b, "g").Cluster("c1").Settings(func(s *plan.Settings) {
		s.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(6 * time.Hour),
			ReadOnlyFilesystem: plan.Duration(10 * time.Minute), UnknownState: plan.Duration(30 * time.Minute)}
	}).
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3}).
		Scope(S{Name: "r01", Servers: 2})
	return withEstimates(b.Plan())
}

func scenario(t *testing.T, p *plan.Plan, src string) *Faults {
	t.Helper()
	sc, diags := ParseScenario([]byte(src), "s.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f, diags := sc.Resolve(PlanTargets(p), start)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f
}

type stepEvent struct {
	at            time.Duration
	typ, op, kind string
	msg           string
}

func serverSteps(events []executor.Event, server string) []stepEvent {
	var out []stepEvent
	for _, e := range events {
		if e.Server == server && (e.Type == "step_started" || e.Type == "step_completed" || e.Type == "step_failed") {
			out = append(out, stepEvent{e.Time.Sub(start), e.Type, e.Op, e.StepKind, e.Message})
		}
	}
	return out
}

func find(evs []stepEvent, typ, kind string) (stepEvent, bool) {
	for _, e := range evs {
		if e.typ == typ && e.kind == kind {
			return e, true
		}
	}
	return stepEvent{}, false
}

// Each fault does to the run what it says, on the virtual clock.
func TestFaults(t *testing.T) {
	// A compute server of r01 starts when the control plane is done:
	// three members one after another.
	r01 := 3 * serverPath
	cases := []struct {
		name, src string
		check     func(t *testing.T, res *Result, events []executor.Event)
	}{
		{"slow updates take factor times their estimate", `
fault "slow" {
  servers = ["c1/r01/r01-s01"]
  factor  = 3
}`, func(t *testing.T, res *Result, events []executor.Event) {
			evs := serverSteps(events, "c1/r01/r01-s01")
			start, _ := find(evs, "step_started", "update")
			done, _ := find(evs, "step_completed", "update")
			if done.at-start.at != 30*time.Minute {
				t.Errorf("the update took %v, want 30m", done.at-start.at)
			}
			if got := bar(t, res.Schedule, "c1/r01/r01-s02"); got.End.Sub(got.Start) != serverPath {
				t.Errorf("the other server took %v", got.End.Sub(got.Start))
			}
		}},
		{"an update that fails fails its server and breaches the rack", `
fault "update_fails" {
  servers   = ["c1/r01/r01-s02"]
  component = "bios"
}`, func(t *testing.T, res *Result, events []executor.Event) {
			b := bar(t, res.Schedule, "c1/r01/r01-s02")
			if b.State != "failed" || b.Reason != "step" || !strings.Contains(b.Message, "the BMC task ended Exception") {
				t.Errorf("r01-s02: %+v", b)
			}
			if res.Outcome.Status != executor.OutcomePaused || res.Outcome.Reason != executor.ReasonThreshold {
				t.Errorf("outcome %s", res.Outcome)
			}
			m := marks(res.Schedule, schedule.MarkThreshold, "cluster.c1.compute.rack.r01")
			if len(m) != 1 || m[0].Result != schedule.ResultPaused || !strings.Contains(m[0].Message, "1 failed > budget 0 (N=2, required 2") {
				t.Errorf("threshold marks %+v", m)
			}
		}},
		{"a server that never comes back is remediated, then fails", `
fault "never_ready" {
  servers = ["c1/r01/r01-s01"]
}`, func(t *testing.T, res *Result, events []executor.Event) {
			b := bar(t, res.Schedule, "c1/r01/r01-s01")
			if b.Reason != "unhealthy" || !strings.Contains(b.Message, "after remediation (reimage)") || !strings.Contains(b.Message, "powered off") {
				t.Errorf("r01-s01: %+v", b)
			}
			// reimage, a wait cut at its 1h timeout, a reimage, another.
			if got := b.End.Sub(b.Start); got != 5*time.Minute+3*time.Minute+10*time.Minute+30*time.Minute+time.Hour+30*time.Minute+time.Hour {
				t.Errorf("r01-s01 failed after %v", got)
			}
		}},
		{"a BMC busy for a while costs its call what is left of it", `
fault "bmc_busy" {
  servers = ["c1/r01/r01-s01"]
  at      = "3h4m"
  for     = "2m"
}`, func(t *testing.T, res *Result, events []executor.Event) {
			// 3h is during its first step after the drain.
			// It starts at 2h57m: drain (a hook, no BMC call) and
			// shutdown until 3h05m, when the update's call meets the
			// spell (3h04m–3h06m) and waits out its last minute.
			_ = r01
			b := bar(t, res.Schedule, "c1/r01/r01-s01")
			if b.State != "completed" || b.End.Sub(b.Start) != serverPath+time.Minute {
				t.Errorf("r01-s01: %v, took %v, want %v", b.State, b.End.Sub(b.Start), serverPath+time.Minute)
			}
		}},
		{"a BMC busy for longer than the retries is unreachable", `
fault "bmc_busy" {
  servers = ["c1/r01/r01-s02"]
}`, func(t *testing.T, res *Result, events []executor.Event) {
			b := bar(t, res.Schedule, "c1/r01/r01-s02")
			if b.Reason != "unreachable" || !strings.Contains(b.Message, "503 Service Unavailable") {
				t.Errorf("r01-s02: %+v", b)
			}
			if got := b.End.Sub(b.Start); got != retryBudget {
				t.Errorf("r01-s02 failed after %v, want the retry budget", got)
			}
		}},
		{"a BMC that drops off mid-update fails the step", `
fault "bmc_down" {
  servers = ["c1/r01/r01-s01"]
  at      = "3h10m"
}`, func(t *testing.T, res *Result, events []executor.Event) {
			evs := serverSteps(events, "c1/r01/r01-s01")
			f, ok := find(evs, "step_failed", "update")
			if !ok || !strings.Contains(f.msg, "does not answer") {
				t.Errorf("no failed update: %+v", evs)
			}
		}},
		{"a control-plane member down holds the next for quorum", `
fault "host_down" {
  servers = ["c1/cp/cp-s03"]
  at      = "30m"
  for     = "3h"
}`, func(t *testing.T, res *Result, events []executor.Event) {
			// cp-s02's pre-flight at 59m sees cp-s03 off: held.
			// A continue at once holds it again: the rehearsal stops.
			m := marks(res.Schedule, schedule.MarkPause, "cluster.c1.control_plane.serial.cp")
			if len(m) == 0 || m[0].Reason != executor.ReasonQuorum || m[0].At.Sub(start) != serverPath || !strings.Contains(m[0].Message, "down now: c1/cp/cp-s03 (health Critical)") {
				t.Fatalf("pause marks %+v", m)
			}
			if res.Outcome.Status != executor.OutcomePaused || res.Outcome.Reason != executor.ReasonQuorum {
				t.Errorf("outcome %s", res.Outcome)
			}
		}},
		{"a read-only root filesystem after the reboot triggers a reimage", `
fault "read_only_filesystem" {
  servers = ["c1/r01/r01-s02"]
  for     = "15m"
}`, func(t *testing.T, res *Result, events []executor.Event) {
			evs := serverSteps(events, "c1/r01/r01-s02")
			f, ok := find(evs, "step_failed", "wait_ready")
			if !ok || !strings.Contains(f.msg, "remediation trigger read_only_filesystem") {
				t.Fatalf("no trigger: %+v", evs)
			}
			// The wait began right after the reimage; the trigger fires
			// once Critical lasted 10 minutes, at the look after that.
			begun, _ := find(evs, "step_started", "wait_ready")
			if d := f.at - begun.at; d < 10*time.Minute || d > 12*time.Minute {
				t.Errorf("the trigger fired after %v", d)
			}
			if b := bar(t, res.Schedule, "c1/r01/r01-s02"); b.State != "completed" {
				t.Errorf("r01-s02 did not come back after the reimage: %+v", b)
			}
		}},
	}
	t.Run("a continue after the member is back goes on", func(t *testing.T) {
		p := oneCluster()
		res := rehearse(t, Options{Plan: p, ApproveAfter: 3 * time.Hour, Faults: scenario(t, p, `
fault "host_down" {
  servers = ["c1/cp/cp-s03"]
  at      = "30m"
  for     = "3h"
}`)})
		m := marks(res.Schedule, schedule.MarkPause, "cluster.c1.control_plane.serial.cp")
		if res.Outcome.Status != executor.OutcomeCompleted || len(m) != 1 || time.Duration(m[0].Held) != 3*time.Hour {
			t.Errorf("outcome %s, pauses %+v", res.Outcome, m)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneCluster()
			var events []executor.Event
			res := rehearse(t, Options{Plan: p, Faults: scenario(t, p, c.src), Events: executor.SinkFunc(func(e executor.Event) { events = append(events, e) })})
			c.check(t, res, events)
		})
	}
}

// Random faults are drawn per server and step from the seed: another seed
// draws others, the same seed the same.
func TestRandomFaultsFollowTheSeed(t *testing.T) {
	failed := func(seed uint64) string {
		p := fleetPlan()
		res := rehearse(t, Options{Plan: p, Seed: seed, Faults: scenario(t, p, `
random {
  fail = { update = 0.3 }
}`)})
		var out []string
		for _, b := range res.Schedule.Bars {
			if b.Kind == schedule.KindServer && b.State == "failed" {
				out = append(out, b.ID)
			}
		}
		return strings.Join(out, " ")
	}
	a, b, c := failed(1), failed(1), failed(2)
	if a == "" || a != b {
		t.Errorf("seed 1 failed %q, then %q", a, b)
	}
	if a == c {
		t.Errorf("seeds 1 and 2 failed the same servers: %q", a)
	}
}
