package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rackform/rackform/planner/plan"
)

func TestRemedyActions(t *testing.T) {
	custom := plan.Settings{Remediation: map[string][]string{"control_plane": {"reboot", "reimage"}, "compute": {"reboot"}}}
	cases := []struct {
		name          string
		set           plan.Settings
		role          string
		hasReimage    bool
		acts, skipped []string
	}{
		{"control plane default", plan.Settings{}, "control_plane", true, []string{"reboot"}, nil},
		{"management default", plan.Settings{}, "management", true, []string{"reboot", "reimage"}, nil},
		{"compute default, firmware only", plan.Settings{}, "compute", false, nil, []string{"reimage"}},
		{"a control plane kind falls back to control_plane", custom, "control_plane_spare", false, []string{"reboot"}, []string{"reimage"}},
		{"the plan's, for the role", custom, "compute", true, []string{"reboot"}, nil},
		{"the plan says nothing for the role", custom, "management", true, nil, nil},
	}
	for _, c := range cases {
		acts, skipped := RemedyActions(c.set, c.role, c.hasReimage)
		if d := cmp.Diff(c.acts, acts); d != "" {
			t.Errorf("%s: actions (-want +got):\n%s", c.name, d)
		}
		if d := cmp.Diff(c.skipped, skipped); d != "" {
			t.Errorf("%s: skipped (-want +got):\n%s", c.name, d)
		}
	}
}

func TestNextRemedy(t *testing.T) {
	acts := []string{ActionReboot, ActionReimage}
	cases := []struct {
		name       string
		role       string
		round      int
		waiting    bool
		poweredOff bool
		want       Remedy
	}{
		{"first action", "compute", 0, false, false, Remedy{Kind: RemedyAction, Round: 1, Action: ActionReboot}},
		{"its wait", "compute", 1, true, false, Remedy{Kind: RemedyWaitReady, Round: 1}},
		{"second action", "compute", 1, false, false, Remedy{Kind: RemedyAction, Round: 2, Action: ActionReimage}},
		{"compute powered off", "compute", 2, false, false, Remedy{Kind: RemedyPowerOff}},
		{"compute gives up once off", "compute", 2, false, true, Remedy{Kind: RemedyGiveUp}},
		{"management gives up, never powered off", "management", 2, false, false, Remedy{Kind: RemedyGiveUp}},
	}
	for _, c := range cases {
		if got := NextRemedy(c.role, acts, c.round, c.waiting, c.poweredOff); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
