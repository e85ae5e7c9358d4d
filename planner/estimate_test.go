package planner

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// table is an Estimator over fixed learned estimates, looked up like
// executor/history's: the class, then each coarser one.
type table struct {
	runs    int
	learned []plan.Learned
}

func (tb table) Runs() int { return tb.runs }

func (tb table) Lookup(k plan.EstimateKey) (plan.Learned, bool) {
	for {
		for _, l := range tb.learned {
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

func learned(k plan.EstimateKey, median, p90 time.Duration) plan.Learned {
	return plan.Learned{Key: k, Samples: 7, Runs: 2, Median: plan.Duration(median), P90: plan.Duration(p90)}
}

// planIdentified plans src with each server's BMC reporting the identity
// ids gives its name (none for the others).
func planIdentified(t *testing.T, src string, ids map[string]providers.Identity, est Estimator) *plan.Plan {
	t.Helper()
	cfg := loadText(t, src)
	provs, fs := fakes(cfg, allBehind)
	for addr, o := range fs["redfish"].Servers {
		o.Identity = ids[addr[strings.LastIndex(addr, "/")+1:]]
	}
	return mustPlan(t, cfg, nil, func(o *Options) { o.Providers, o.Estimates = provs, est })
}

// Each step takes the learned median of its class, found at the model,
// the vendor or any server; steps without one keep the default; the plan
// says which runs and estimates it used.
func TestLearnedEstimates(t *testing.T) {
	const m = time.Minute
	contoso := func(model string) providers.Identity {
		return providers.Identity{UUID: "u-" + model, Manufacturer: "Contoso", Model: model}
	}
	est := table{runs: 4, learned: []plan.Learned{
		learned(plan.EstimateKey{Kind: plan.StepUpdate, Component: "bios", Manufacturer: "Contoso", Model: "R640"}, 7*m, 9*m),
		learned(plan.EstimateKey{Kind: plan.StepUpdate, Component: "bios"}, 12*m, 20*m),
		learned(plan.EstimateKey{Kind: plan.StepReimage, Component: "runtime", Manufacturer: "Contoso"}, 25*m, 40*m),
		learned(plan.EstimateKey{Kind: plan.StepShutdown}, 2*m, 3*m),
		// Longer than the verify timeout: capped by it, like a default.
		learned(plan.EstimateKey{Kind: plan.StepWaitReady, AfterBoot: true}, 30*time.Hour, 40*time.Hour),
	}}
	src := fixture{racks: withCP([]string{"r1", "a:c", "b:c", "c:c", "d:c"})}.String()
	p := planIdentified(t, src, map[string]providers.Identity{"a": contoso("R640"), "b": contoso("R640"), "c": contoso("R750"),
		"d": {Manufacturer: "Fabrikam", Model: "X1"}}, est)

	type step struct {
		Kind     plan.StepKind
		Estimate time.Duration
		From     string // the learned class, or "default"
	}
	byName := map[string][]step{}
	for _, s := range p.Servers {
		var sum plan.Duration
		for _, st := range s.Steps {
			from := "default"
			if st.Learned != nil {
				from = st.Learned.Key.String()
				if st.Learned.Samples != 7 || st.Learned.Runs != 2 {
					t.Errorf("%s %s: learned %+v, not the table's", s.Address, st.Kind, st.Learned)
				}
			}
			byName[s.Name] = append(byName[s.Name], step{st.Kind, time.Duration(st.Estimate), from})
			sum += st.Estimate
		}
		if s.Estimate != sum {
			t.Errorf("%s: estimate %s, its steps sum to %s", s.Address, s.Estimate, sum)
		}
	}
	verify := time.Duration(p.Servers[0].Steps[len(p.Servers[0].Steps)-1].Timeout)
	if verify <= 0 || verify >= 30*time.Hour {
		t.Fatalf("the fixture's wait_ready timeout is %s; the test wants one under 30h", verify)
	}
	waitReady := step{plan.StepWaitReady, verify, "wait_ready after a boot (any server)"}
	shutdown := step{plan.StepShutdown, 2 * m, "shutdown (any server)"}
	for name, want := range map[string][]step{
		"a": {shutdown, {plan.StepUpdate, 7 * m, "update bios on Contoso R640"}, {plan.StepReimage, 25 * m, "reimage runtime on Contoso (any model)"}, waitReady},
		"c": {shutdown, {plan.StepUpdate, 12 * m, "update bios (any server)"}, {plan.StepReimage, 25 * m, "reimage runtime on Contoso (any model)"}, waitReady},
		"d": {shutdown, {plan.StepUpdate, 12 * m, "update bios (any server)"}, {plan.StepReimage, plan.TypicalReimage, "default"}, waitReady},
	} {
		if diff := cmp.Diff(want, byName[name]); diff != "" {
			t.Errorf("server %s's steps (-want +got):\n%s", name, diff)
		}
	}
	if p.History == nil || p.History.Runs != 4 {
		t.Fatalf("history %+v, want 4 runs", p.History)
	}
	var used []string
	for _, l := range p.History.Estimates {
		used = append(used, l.Key.String())
	}
	want := []string{
		// The control plane comes first in the run, its servers of no
		// known vendor: the classes of any server.
		"shutdown (any server)", "update bios (any server)", "wait_ready after a boot (any server)",
		"update bios on Contoso R640", "reimage runtime on Contoso (any model)",
	}
	if diff := cmp.Diff(want, used); diff != "" {
		t.Errorf("the plan's learned estimates, in first use (-want +got):\n%s", diff)
	}

	// Without an estimator nothing is learned and the plan says nothing.
	plain := planIdentified(t, src, nil, nil)
	if plain.History != nil {
		t.Errorf("history without an estimator: %+v", plain.History)
	}
	for _, s := range plain.Servers {
		for _, st := range s.Steps {
			if st.Learned != nil {
				t.Errorf("%s %s learned without an estimator", s.Address, st.Kind)
			}
		}
	}
}

// A rack ends with its slowest server: servers side by side each take
// their median plus their spread (p90 − median) scaled to the slowest of
// that many; one at a time they take their medians.
func TestScopeEstimateWithLearnedSpread(t *testing.T) {
	const m = time.Minute
	est := table{runs: 1, learned: []plan.Learned{
		learned(plan.EstimateKey{Kind: plan.StepShutdown}, 1*m, 2*m),
		learned(plan.EstimateKey{Kind: plan.StepUpdate, Component: "bios"}, 10*m, 14*m),
		learned(plan.EstimateKey{Kind: plan.StepReimage, Component: "runtime"}, 20*m, 30*m),
		learned(plan.EstimateKey{Kind: plan.StepWaitReady, AfterBoot: true}, 5*m, 5*m),
	}}
	const median, spread = 36 * m, 15 * m
	rack := []string{"r1", "a:c", "b:c", "c:c", "d:c", "e:c"}
	for _, tc := range []struct {
		maxUnavailable string
		want           time.Duration
	}{
		{"1", 5 * median},
		{"2", 3 * (median + time.Duration(slowestOf(2)*float64(spread)))},
		{`"100%"`, median + time.Duration(slowestOf(5)*float64(spread))},
	} {
		src := fixture{strategy: "compute {\nmax_unavailable = " + tc.maxUnavailable + "\n}", racks: withCP(rack)}.String()
		p := planIdentified(t, src, nil, est)
		sc := computeScopes(p)[0]
		if got := time.Duration(sc.Estimate); got != tc.want {
			t.Errorf("max_unavailable %s: rack estimate %s, want %s", tc.maxUnavailable, got, tc.want)
		}
		if s := p.Servers[len(p.Servers)-1]; time.Duration(s.Estimate) != median {
			t.Errorf("max_unavailable %s: server estimate %s, want the medians' %s", tc.maxUnavailable, time.Duration(s.Estimate), median)
		}
	}
}

func TestSlowestOf(t *testing.T) {
	got := []float64{}
	for _, k := range []int{0, 1, 2, 10, 40} {
		got = append(got, math.Round(slowestOf(k)*100)/100)
	}
	if diff := cmp.Diff([]float64{0, 0, 0.46, 1.21, 1.68}, got); diff != "" {
		t.Errorf("slowestOf (-want +got):\n%s", diff)
	}
	if !slices.IsSorted(got) {
		t.Error("more servers at once must never be estimated faster")
	}
}
