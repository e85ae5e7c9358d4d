package planview

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// learnedTable is an estimator of fixed learned estimates, looked up like
// executor/history's (the class, then each coarser one).
type learnedTable struct {
	runs    int
	learned []plan.Learned
}

func (lt learnedTable) Runs() int { return lt.runs }

func (lt learnedTable) Lookup(k plan.EstimateKey) (plan.Learned, bool) {
	for {
		for _, l := range lt.learned {
			if l.Key == k {
				return l, true
			}
		}
		next, ok := k.Coarser()
		if !ok {
			return plan.Learned{}, false
		}
		k = next
	}
}

// The plan text and show -json say which estimates were learned, from
// how much, and which steps kept their default (pause-rack.learned.*).
func TestLearnedGolden(t *testing.T) {
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: getenv}).Load("../../../../../../examples/pause-rack")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	fs := plannertest.FromConfig(cfg, func(int, *config.Server) plannertest.State { return plannertest.Behind })
	provs := map[string]providers.Provider{}
	for n, f := range fs {
		provs[n] = f
		for addr, o := range f.Servers {
			if strings.HasSuffix(addr, "1") || strings.HasSuffix(addr, "2") {
				o.Identity = providers.Identity{Manufacturer: "Contoso", Model: "R640"}
			}
		}
	}
	m := func(min, sec int) plan.Duration {
		return plan.Duration(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)
	}
	est := learnedTable{runs: 3, learned: []plan.Learned{
		{Key: plan.EstimateKey{Kind: plan.StepReimage, Component: "runtime", Manufacturer: "Contoso", Model: "R640"}, Samples: 38, Runs: 3, Median: m(21, 30), P90: m(24, 0)},
		{Key: plan.EstimateKey{Kind: plan.StepReimage, Component: "runtime"}, Samples: 60, Runs: 3, Median: m(22, 10), P90: m(26, 0)},
		{Key: plan.EstimateKey{Kind: plan.StepWaitReady, AfterBoot: true}, Samples: 60, Runs: 3, Median: m(4, 5), P90: m(6, 0)},
	}}
	p, pd := planner.Plan(context.Background(), cfg, planner.Options{
		Providers: provs, Now: testNow, RackformVersion: "0.0.0-test", Estimates: est,
		ProviderInfo: []plan.Provider{{Name: "redfish", Version: "0.0.0-test", Source: "builtin", SHA256: strings.Repeat("0", 64)}},
	})
	if pd.HasErrors() {
		t.Fatal(pd.Error())
	}
	file, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	var text, shown bytes.Buffer
	if err := WriteText(&text, p, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&shown, p, plan.SHA256(file)); err != nil {
		t.Fatal(err)
	}
	golden(t, "pause-rack.learned.txt", text.Bytes())
	golden(t, "pause-rack.learned.show.json", shown.Bytes())
	for _, want := range []string{
		"  estimates learned from 3 earlier runs (other steps have their kind's default):\n",
		"    reimage runtime on Contoso R640: median 21m30s (p90 24m), 38 samples in 3 runs\n",
		"    reimage runtime (any server): median 22m10s (p90 26m), 60 samples in 3 runs\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the plan text lacks %q", want)
		}
	}
	j := BuildJSON(p, plan.SHA256(file))
	sources := map[string]int{}
	for _, s := range j.Servers {
		for _, st := range s.Steps {
			sources[st.EstimateSource+" "+st.Kind]++
			if (st.EstimateSource == EstimateLearned) != (st.Learned != nil) {
				t.Errorf("%s step %d: source %s, learned %v", s.Address, st.Index, st.EstimateSource, st.Learned)
			}
			if st.Learned != nil && st.Estimate != st.Learned.Median && st.Estimate != st.Timeout {
				t.Errorf("%s step %d: estimate %s is neither the learned median %s nor the timeout", s.Address, st.Index, st.Estimate, st.Learned.Median)
			}
		}
	}
	for _, k := range []string{"learned reimage", "learned wait_ready", "default shutdown"} {
		if sources[k] == 0 {
			t.Errorf("no step is %q: %v", k, sources)
		}
	}
	if j.History == nil || j.History.Runs != 3 || len(j.History.Estimates) != 3 {
		t.Errorf("show -json history %+v", j.History)
	}
}

func TestHistoryLines(t *testing.T) {
	for _, tc := range []struct {
		h    *plan.History
		want []string
	}{
		{nil, nil},
		{&plan.History{}, []string{"estimates: no earlier run in the history; every step has its kind's default"}},
		{&plan.History{Runs: 1}, []string{"estimates: 1 earlier run read, none with steps like these; every step has its kind's default"}},
		{&plan.History{Runs: 2, Estimates: []plan.Learned{{Key: plan.EstimateKey{Kind: plan.StepShutdown, Manufacturer: "Contoso"},
			Samples: 1, Runs: 1, Median: plan.Duration(157 * time.Millisecond), P90: plan.Duration(12*time.Second + 400*time.Millisecond)}}},
			[]string{"estimates learned from 2 earlier runs (other steps have their kind's default):",
				"  shutdown on Contoso (any model): median 157ms (p90 12s), 1 sample in 1 run"}},
	} {
		if diff := cmp.Diff(tc.want, HistoryLines(&plan.Plan{History: tc.h})); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.h, diff)
		}
	}
}
