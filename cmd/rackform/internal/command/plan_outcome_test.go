package command

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// editedStarter is fakeStarter with each server's observation edited by
// edit (by plan address, i its index in the configuration).
func editedStarter(t *testing.T, dir string, state func(int, *config.Server) plannertest.State, edit func(i int, addr string, o *providers.Observation)) run.ProviderStarter {
	t.Helper()
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: planTestEnv}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	fakes := plannertest.FromConfig(cfg, state)
	for i, s := range cfg.Servers() {
		addr := plannertest.Address(s)
		for _, f := range fakes {
			if o := f.Servers[addr]; o != nil {
				edit(i, addr, o)
			}
		}
	}
	return func(_ context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error) {
		return &recordingProvider{Provider: fakes[decl.Name], name: decl.Name},
			plan.Provider{Name: decl.Name, Version: "0.0.0-test", Source: "builtin", SHA256: strings.Repeat("a", 64)}, func() {}, nil
	}
}

func outcome(kind, msg string) func(*providers.Observation) {
	return func(o *providers.Observation) {
		*o = providers.Observation{Server: o.Server, Outcome: kind, Diagnostics: providers.Errorf(o.Server, "BMC answered", msg)}
	}
}

// Exit codes that never lie: plan -detailed-exitcode is 0 only when every
// in-scope server was observed and is at target; configuration problems
// and a cluster with no server observed fail (1); unobserved (unreachable,
// skipped) and held-back servers make it 2, never 0. The same in -json.
func TestPlanExitCodesNeverLie(t *testing.T) {
	every := func(kind, msg string) func(int, string, *providers.Observation) {
		return func(_ int, _ string, o *providers.Observation) { outcome(kind, msg)(o) }
	}
	first := func(kind, msg string) func(int, string, *providers.Observation) {
		return func(i int, _ string, o *providers.Observation) {
			if i == 0 {
				outcome(kind, msg)(o)
			}
		}
	}
	undecidable := func(i int, _ string, o *providers.Observation) {
		if i == 0 {
			o.Components[0].Version = "not a version"
		}
	}
	none := func(int, string, *providers.Observation) {}
	cases := []struct {
		name   string
		state  func(int, *config.Server) plannertest.State
		edit   func(int, string, *providers.Observation)
		args   []string
		want   int
		stderr []string // each must appear exactly once
	}{
		{"at target", atTargetState, none, []string{"-detailed-exitcode"}, ExitOK, nil},
		{"every BMC down", atTargetState, every(providers.OutcomeUnreachable, "dial tcp: connection refused"), []string{"-detailed-exitcode"}, ExitError,
			[]string{"servers unreachable", "No server of cluster"}},
		{"wrong password everywhere", atTargetState, every(providers.OutcomeCredentialsRefused, "HTTP 401: invalid credentials"), []string{"-detailed-exitcode"}, ExitError,
			[]string{"servers refused the credentials"}},
		{"no firmware inventory", atTargetState, first(providers.OutcomeInventoryUnavailable, "FirmwareInventory: HTTP 404"), []string{"-detailed-exitcode"}, ExitError,
			[]string{"without a usable firmware inventory"}},
		{"system unresolved", atTargetState, first(providers.OutcomeSystemUnresolved, "the BMC serves 2 systems"), []string{"-detailed-exitcode"}, ExitError,
			[]string{"whose system could not be resolved"}},
		{"one unreachable, rest at target", atTargetState, first(providers.OutcomeUnreachable, "timeout"), []string{"-detailed-exitcode"}, exitChanges,
			[]string{"servers unreachable"}},
		{"one unreachable, not detailed", atTargetState, first(providers.OutcomeUnreachable, "timeout"), nil, ExitOK, nil},
		{"one unreachable, blocked", atTargetState, first(providers.OutcomeUnreachable, "timeout"), []string{"-on-unreachable=block"}, ExitError, nil},
		{"credentials refused, held back", atTargetState, first(providers.OutcomeCredentialsRefused, "HTTP 401"), []string{"-detailed-exitcode", "-hold-back-errored"}, exitChanges, nil},
		{"undecidable", atTargetState, undecidable, []string{"-detailed-exitcode"}, ExitError, []string{"Undecidable version"}},
		{"undecidable, held back", atTargetState, undecidable, []string{"-detailed-exitcode", "-hold-back-errored"}, exitChanges, []string{"Held back: Undecidable version"}},
		{"every BMC down, held back", atTargetState, every(providers.OutcomeUnreachable, "timeout"), []string{"-hold-back-errored"}, ExitError, []string{"No server of cluster"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, js := range []bool{false, true} {
				args := append([]string(nil), c.args...)
				if js {
					args = append(args, "-json")
				}
				code, stdout, stderr := runPlan(t, editedStarter(t, planTestDir, c.state, c.edit), append(args, planTestDir)...)
				if code != c.want {
					t.Errorf("json=%v: exit %d, want %d; stderr:\n%s", js, code, c.want, stderr)
				}
				out := stderr
				if js {
					out = stdout
				}
				for _, s := range c.stderr {
					n := 0
					for _, line := range strings.Split(out, "\n") {
						if strings.Contains(line, s) {
							n++
						}
					}
					if n != 1 {
						t.Errorf("json=%v: %q is on %d lines, want one (one line per cause):\n%s", js, s, n, out)
					}
				}
			}
		})
	}
}

// The summary lists unobserved servers first, one count per cause, in
// text, -json and the markdown; held-back servers are listed with their
// reasons in each.
func TestPlanSummaryListsUnobservedAndHeldBackFirst(t *testing.T) {
	// Compute and management servers only: a control-plane member not
	// observed would (rightly) refuse the plan for quorum.
	edit := func(i int, _ string, o *providers.Observation) {
		switch i {
		case 3, 4: // c1a, c1b
			outcome(providers.OutcomeUnreachable, "dial tcp: connection refused")(o)
		case 2: // mg1
			outcome(providers.OutcomeCredentialsRefused, "HTTP 401")(o)
		case 7: // c2a
			o.Components[0].Version = "not a version"
		}
	}
	out := filepath.Join(t.TempDir(), "plan.json")
	code, stdout, stderr := runPlan(t, editedStarter(t, planTestDir, behindState, edit), "-hold-back-errored", "-out", out, planTestDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	head := "3 of 11 servers not observed: 2 unreachable, 1 credentials refused; 1 server held back; "
	if !strings.Contains(stdout, "\nPlan: "+head) {
		t.Errorf("the summary line does not start with the unobserved and held-back servers:\n%s", stdout)
	}
	if i, j := strings.Index(stdout, "Held back: 1 server"), strings.Index(stdout, "Stage "); i < 0 || j < i {
		t.Errorf("held-back servers must be listed before the run tree:\n%s", stdout)
	}
	if !strings.Contains(stdout, "    - Undecidable version: ") {
		t.Errorf("the held-back server's reason is not listed:\n%s", stdout)
	}
	_, md, _ := runShow(t, "-format=markdown", out)
	if !strings.HasPrefix(md, "### rackform plan: "+head) || !strings.Contains(md, "held back** for their problems") || !strings.Contains(md, "Undecidable version") {
		t.Errorf("markdown:\n%s", md)
	}
	_, js, _ := runPlan(t, editedStarter(t, planTestDir, behindState, edit), "-hold-back-errored", "-json", planTestDir)
	var sum struct {
		Message string       `json:"@message"`
		Changes plan.Summary `json:"changes"`
	}
	for _, line := range strings.Split(js, "\n") {
		if strings.Contains(line, `"type":"change_summary"`) {
			if err := json.Unmarshal([]byte(line), &sum); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s := sum.Changes; s.NotObserved != 3 || s.Unreachable != 2 || s.CredentialsRefused != 1 || s.HeldBack != 1 || !strings.HasPrefix(sum.Message, "Plan: "+head) {
		t.Errorf("change_summary: %+v %q", s, sum.Message)
	}
	if !strings.Contains(js, `"problems":["Undecidable version: `) {
		t.Errorf("-json does not carry the held-back server's problems:\n%s", js)
	}
}

// show reads every plan format ever written (text, markdown, JSON).
func TestShowReadsEveryFormat(t *testing.T) {
	files, _ := filepath.Glob("../../../../planner/plan/testdata/format-*.plan.json")
	if len(files) < 4 {
		t.Fatalf("format goldens: %v", files)
	}
	for _, f := range files {
		for _, format := range []string{"text", "markdown", "html", "json"} {
			if code, out, stderr := runShow(t, "-format="+format, f); code != ExitOK || out == "" {
				t.Errorf("%s -format=%s: exit %d: %s", filepath.Base(f), format, code, stderr)
			}
		}
	}
}
