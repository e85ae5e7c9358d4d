package command

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/uijson"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

const planTestDir = "../../../../planner/testdata/nexus"

func planTestEnv(name string) string {
	if name == "BMC_PASSWORD" {
		return "pw-only-in-memory"
	}
	return ""
}

// fakeStarter serves every provider of the configuration in dir from
// in-process fakes whose servers report what state says, and records the
// configuration each provider was given.
func fakeStarter(t *testing.T, dir string, state func(int, *config.Server) plannertest.State, configured map[string]string) run.ProviderStarter {
	t.Helper()
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: planTestEnv}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	fakes := plannertest.FromConfig(cfg, state)
	return func(_ context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error) {
		return &recordingProvider{Provider: fakes[decl.Name], name: decl.Name, configured: configured},
			plan.Provider{Name: decl.Name, Version: "0.0.0-test", Source: "builtin", SHA256: strings.Repeat("a", 64)}, func() {}, nil
	}
}

type recordingProvider struct {
	*plannertest.Provider
	name       string
	configured map[string]string
}

func (r *recordingProvider) Configure(_ context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	if r.configured != nil {
		r.configured[r.name] = string(req.Config)
	}
	return nil
}

func runPlan(t *testing.T, start run.ProviderStarter, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	m := &Meta{Streams: Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, Getenv: planTestEnv}
	c := &planCommand{Meta: m, start: start, now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }}
	code := c.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func runShow(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	m := &Meta{Streams: Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, Getenv: planTestEnv}
	code := (&showCommand{Meta: m}).Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func behindState(int, *config.Server) plannertest.State   { return plannertest.Behind }
func atTargetState(int, *config.Server) plannertest.State { return plannertest.AtTarget }

func TestPlanExitCodes(t *testing.T) {
	cases := []struct {
		name  string
		state func(int, *config.Server) plannertest.State
		args  []string
		want  int
	}{
		{"changes", behindState, nil, ExitOK},
		{"changes, detailed", behindState, []string{"-detailed-exitcode"}, exitChanges},
		{"no changes, detailed", atTargetState, []string{"-detailed-exitcode"}, ExitOK},
		{"error, detailed", behindState, []string{"-detailed-exitcode", "-target", "lab/nope"}, ExitError},
		{"bad flag, detailed", behindState, []string{"-detailed-exitcode", "-bogus"}, ExitError},
		{"bad on-unreachable", behindState, []string{"-on-unreachable", "maybe"}, ExitError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runPlan(t, fakeStarter(t, planTestDir, c.state, nil), append(c.args, planTestDir)...)
			if code != c.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.want, stderr)
			}
		})
	}
}

// Plan stops its provider plugins once every server is observed, before it
// builds and writes the plan (a plugin observing 100,000 servers holds a
// few hundred MB), and stops each once.
func TestPlanStopsProvidersOnceObserved(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	inner := fakeStarter(t, planTestDir, behindState, nil)
	var stops []string
	start := func(ctx context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error) {
		prov, info, _, err := inner(ctx, decl)
		return prov, info, func() {
			when := "before the plan was written"
			if _, err := os.Stat(out); err == nil {
				when = "after the plan was written"
			}
			stops = append(stops, decl.Name+" "+when)
		}, err
	}
	if code, _, stderr := runPlan(t, start, "-out", out, planTestDir); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(stops) != 1 || stops[0] != "redfish before the plan was written" {
		t.Errorf("provider stops = %q, want one, before the plan was written", stops)
	}
}

func TestPlanOutAndShow(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	configured := map[string]string{}
	code, stdout, stderr := runPlan(t, fakeStarter(t, planTestDir, behindState, configured), "-out", out, planTestDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sha := plan.SHA256(file)
	if !strings.Contains(stdout, "Plan SHA-256: "+sha+"\n") {
		t.Errorf("plan does not print the file's SHA-256 %s:\n%s", sha, stdout)
	}
	if !regexp.MustCompile(`(?m)^Plan: \d+ servers to upgrade in \d+ racks, \d+ skipped, ~\S+$`).MatchString(stdout) {
		t.Errorf("no summary line in:\n%s", stdout)
	}
	// The provider got the sensitive password in memory; the plan file did not.
	if !strings.Contains(configured["redfish"], "pw-only-in-memory") {
		t.Errorf("Configure did not receive the provider block: %q", configured["redfish"])
	}
	if strings.Contains(string(file), "pw-only-in-memory") || strings.Contains(stdout+stderr, "pw-only-in-memory") {
		t.Error("the password leaked into the plan or the output")
	}

	code, text, stderr := runShow(t, out)
	if code != ExitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	planText := stdout[:strings.Index(stdout, "\nSaved the plan")]
	if !strings.HasPrefix(text, planText) {
		t.Errorf("show renders the plan differently from plan:\n%s\n---\n%s", planText, text)
	}
	// show -json is the machine-readable view (docs/json.md), keyed by
	// address and naming the file it shows by its hash.
	code, js, _ := runShow(t, "-json", out)
	var view struct {
		FormatVersion string                     `json:"format_version"`
		PlanSHA256    string                     `json:"plan_sha256"`
		Servers       map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js), &view); code != ExitOK || err != nil {
		t.Fatalf("show -json (exit %d): %v\n%s", code, err, js)
	}
	if view.FormatVersion != planview.JSONFormatVersion || view.PlanSHA256 != sha || len(view.Servers) == 0 {
		t.Errorf("show -json: format_version %q, plan_sha256 %q (want %q), %d servers", view.FormatVersion, view.PlanSHA256, sha, len(view.Servers))
	}
	code, md, _ := runShow(t, "-format=markdown", out)
	if code != ExitOK || !strings.HasPrefix(md, "### rackform plan: ") || !strings.Contains(md, sha) {
		t.Errorf("show -format=markdown (exit %d):\n%s", code, md)
	}

	// A tampered file is refused.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(file), `"to":"2.80"`, `"to":"2.81"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runShow(t, bad)
	if code != ExitError || !strings.Contains(stderr, "damaged or was edited after it was written") || !strings.Contains(stderr, bad) {
		t.Errorf("tampered plan: exit %d, stderr %q", code, stderr)
	}
}

func TestPlanJSONStream(t *testing.T) {
	code, stdout, stderr := runPlan(t, fakeStarter(t, planTestDir, func(i int, _ *config.Server) plannertest.State {
		if i == 2 {
			return plannertest.Unreachable
		}
		return plannertest.Behind
	}, nil), "-json", planTestDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var m struct {
			Type  string `json:"type"`
			Level string `json:"@level"`
			UI    string `json:"ui"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not JSON: %s", sc.Text())
		}
		if len(types) == 0 || types[len(types)-1] != m.Type {
			types = append(types, m.Type)
		}
		if m.Type == "version" && m.UI != uijson.Version {
			t.Errorf("stream version %q", m.UI)
		}
	}
	want := []string{"version", "diagnostic", "planned_change", "change_summary", "plan_file"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Errorf("message types %v, want %v", types, want)
	}
	if stderr != "" {
		t.Errorf("-json wrote to stderr: %s", stderr)
	}
}

func TestPlanErrorsRenderLikeValidate(t *testing.T) {
	code, _, stderr := runPlan(t, fakeStarter(t, planTestDir, behindState, nil), "-target", "lab/rack9", "-on-unreachable=block", planTestDir)
	if code != ExitError {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr, "Target matches nothing") || !strings.Contains(stderr, `-target "lab/rack9"`) {
		t.Errorf("stderr:\n%s", stderr)
	}
	// A server-level error points at the server's block with a snippet.
	code, _, stderr = runPlan(t, fakeStarter(t, planTestDir, func(_ int, s *config.Server) plannertest.State {
		if s.Name == "c2a" {
			return plannertest.Unreachable
		}
		return plannertest.Behind
	}, nil), "-on-unreachable=block", planTestDir)
	if code != ExitError || !strings.Contains(stderr, "1 of 11 servers unreachable") || !strings.Contains(stderr, `server "c2a"`) || !strings.Contains(stderr, "main.rf.hcl line") && !strings.Contains(stderr, "main.rf.hcl:") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
