package planner

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
)

// quorumFixture: three control-plane members and a spare across three
// racks (rack resiliency's placement), and a compute rack.
func quorumFixture(strategy string) *fixture {
	return &fixture{strategy: strategy, racks: withCP([]string{"r1", "c1:c", "c2:c"})}
}

// cp2Down makes cp2 unreachable; every other server is behind.
func cp2Down(_ int, s *config.Server) plannertest.State {
	if s.Name == "cp2" {
		return plannertest.Unreachable
	}
	return plannertest.Behind
}

func quorumDiag(diags hcl.Diagnostics) *hcl.Diagnostic {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && strings.Contains(d.Summary, "quorum") {
			return d
		}
	}
	return nil
}

func clusterQuorum(p *plan.Plan) *plan.Quorum {
	return p.Run.Stages[0].Groups[0].Clusters[0].Quorum
}

// Rack resiliency: a plan that would take the control plane's healthy
// members below quorum is refused, naming quorum, the servers and the
// ways out (restore the member, let the spare take over, or override).
func TestQuorumPlanRefusedWhenAMemberIsDown(t *testing.T) {
	cfg := loadText(t, quorumFixture("").String())
	_, diags := planWith(t, cfg, cp2Down, nil)
	d := quorumDiag(diags)
	if d == nil {
		t.Fatalf("no quorum error; diagnostics: %s", diags.Error())
	}
	for _, want := range []string{"quorum", "c/x-cp2/cp2 (unreachable) is down", "upgrading c/x-cp1/cp1, c/x-cp3/cp3", "leaving 1",
		"restore c/x-cp2/cp2", "spare_takeover = true", "c/x-cp1/spare", "allow_quorum_loss = true"} {
		if !strings.Contains(d.Summary+" "+d.Detail, want) {
			t.Errorf("the quorum error does not say %q:\n%s: %s", want, d.Summary, d.Detail)
		}
	}
	if d.Subject == nil || !strings.HasSuffix(d.Subject.Filename, "main.rf.hcl") {
		t.Errorf("the error points at %v, want the down server in main.rf.hcl", d.Subject)
	}
}

// The same when the member answers but is unhealthy (health Critical):
// reachable is not healthy.
func TestQuorumPlanRefusedWhenAMemberIsReachableButUnhealthy(t *testing.T) {
	cfg := loadText(t, quorumFixture("").String())
	provs, fs := fakes(cfg, allBehind)
	fs["redfish"].Servers["c/x-cp3/cp3"].Health = "Critical"
	_, diags := planWith(t, cfg, nil, func(o *Options) { o.Providers = provs })
	d := quorumDiag(diags)
	if d == nil {
		t.Fatalf("no quorum error; diagnostics: %s", diags.Error())
	}
	if !strings.Contains(d.Detail, "c/x-cp3/cp3 (health Critical) is down") {
		t.Errorf("the error does not name the unhealthy member: %s", d.Detail)
	}
}

// A healthy control plane plans as before, with nothing recorded.
func TestQuorumHealthyControlPlaneRecordsNothing(t *testing.T) {
	p := mustPlan(t, loadText(t, quorumFixture("").String()), nil, nil)
	if q := clusterQuorum(p); q != nil {
		t.Errorf("a healthy control plane recorded %+v", q)
	}
}

// The explicit override plans, and the plan shows it: a warning and the
// override recorded on the cluster for apply.
func TestQuorumOverrideIsShownProminently(t *testing.T) {
	cfg := loadText(t, quorumFixture("control_plane {\n  allow_quorum_loss = true\n}").String())
	p := mustPlan(t, cfg, cp2Down, nil)
	q := clusterQuorum(p)
	if q == nil || !q.Override || q.Healthy != 2 || q.Required != 2 || len(q.Down) != 1 || q.Down[0].Server != "c/x-cp2/cp2" {
		t.Fatalf("quorum = %+v, want the override with cp2 down", q)
	}
	found := false
	for _, w := range p.Warnings {
		if w.Summary == "Control-plane quorum override" && strings.Contains(w.Detail, "allow_quorum_loss = true") {
			found = true
		}
	}
	if !found {
		t.Errorf("no override warning in %+v", p.Warnings)
	}
}

// Spare takeover (rack resiliency): with spare_takeover the upgraded spare
// takes the down member's place, so quorum holds and the plan records who
// replaces whom.
func TestQuorumSpareTakeoverKeepsQuorum(t *testing.T) {
	cfg := loadText(t, quorumFixture("control_plane {\n  spare_takeover = true\n  takeover_command = [\"true\"]\n}").String())
	p := mustPlan(t, cfg, cp2Down, nil)
	q := clusterQuorum(p)
	if q == nil || q.Override || q.Takeover == nil || q.Takeover.Spare != "c/x-cp1/spare" || q.Takeover.Replaces != "c/x-cp2/cp2" {
		t.Fatalf("quorum = %+v, want the spare taking cp2's place", q)
	}
}

// Seed limits: a strategy that opts out of the drain (20m) and VM
// shutdown (10m) limits plans, and the plan warns about each.
func TestSeedLimitsOptOutWarns(t *testing.T) {
	cfg := loadText(t, quorumFixture("drain_timeout = \"45m\"\nshutdown_timeout = \"15m\"\nexceed_seed_limits = true").String())
	p := mustPlan(t, cfg, nil, nil)
	var got []string
	for _, w := range p.Warnings {
		if strings.HasPrefix(w.Summary, "Above the seed limit") {
			got = append(got, w.Summary+": "+w.Detail)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], "drain_timeout to 45m, above the 20m") || !strings.Contains(got[1], "shutdown_timeout to 15m, above the 10m") {
		t.Errorf("warnings = %q", got)
	}
}

// The scenario on the nexus-lab example: with r02-s01 (one of its
// three control-plane members) down, plan refuses instead of upgrading
// r01-s01 and r03-s01 one at a time.
func TestQuorumNexusLabWithAMemberDown(t *testing.T) {
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: func(n string) string {
		if n == "RACKFORM_BMC_PASSWORD" {
			return "pw"
		}
		return ""
	}}).Load("../examples/nexus-lab")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, diags = planWith(t, cfg, func(_ int, s *config.Server) plannertest.State {
		if s.Name == "r02-s01" {
			return plannertest.Unreachable
		}
		return plannertest.Behind
	}, nil)
	d := quorumDiag(diags)
	if d == nil || !strings.Contains(d.Detail, "lab/r02/r02-s01 (unreachable) is down") || !strings.Contains(d.Detail, "upgrading lab/r01/r01-s01, lab/r03/r03-s01") || !strings.Contains(d.Detail, "let the spare lab/r04/r04-s01 take the place of lab/r02/r02-s01") {
		t.Fatalf("want the quorum refusal naming the servers and the spare; got %v", diags)
	}
}
