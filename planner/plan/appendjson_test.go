package plan

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// appendEqual fails unless got is what encoding/json writes for v in the
// plan file's canonical form.
func appendEqual(t *testing.T, what string, got []byte, v any) {
	t.Helper()
	want, err := newCanonical().marshal(v)
	if err != nil {
		t.Fatalf("%s: encoding/json: %v", what, err)
	}
	if string(got) != string(want) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func checkAppenders(t *testing.T, what string, comps []providers.Component, changes []Change, steps []Step) {
	t.Helper()
	for i := range comps {
		appendEqual(t, what+" component", appendComponent(nil, &comps[i]), &comps[i])
	}
	for i := range changes {
		appendEqual(t, what+" change", appendChange(nil, &changes[i]), &changes[i])
	}
	for i := range steps {
		b, err := appendStep(nil, &steps[i])
		if err != nil {
			t.Fatalf("%s step: %v", what, err)
		}
		appendEqual(t, what+" step", b, steps[i].fileForm())
	}
}

// The hand-written encoders write what encoding/json writes for every
// component, change and step of every plan the repository keeps.
func TestAppendersMatchStoredPlans(t *testing.T) {
	steps := 0
	for f, p := range storedPlans(t) {
		for _, s := range p.Servers {
			checkAppenders(t, f+" "+s.Address, s.Observed.Components, s.Changes, s.Steps)
			steps += len(s.Steps)
		}
	}
	if steps < 100 {
		t.Fatalf("only %d steps in the stored plans", steps)
	}
}

// ... and for random ones, with strings encoding/json escapes.
func TestAppendersMatchRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "", "BIOS", "a<b>&c", `q"uote`, `back\slash`, "line\nfeed", "\x01\x1f\x7f", "tab\t\b\f\r",
		"é ü 世界", "\u2028\u2029", "bad \xff utf8", "Previous-159-1.2.4__BIOS.Setup.1-1", "1.2.3"}
	str := func() string { return strs[r.IntN(len(strs))] }
	list := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = str()
		}
		return out
	}
	match := func() providers.Match {
		return providers.Match{SoftwareID: str(), ID: str(), NamePattern: str(), Count: r.IntN(3) - 1}
	}
	dur := func() Duration {
		return Duration(time.Duration(r.Int64N(int64(3*time.Hour))) * time.Duration(r.IntN(2)))
	}
	for n := 0; n < 2000; n++ {
		c := providers.Component{ID: str(), Name: str(), SoftwareID: str(), Version: str(), Updateable: r.IntN(2) == 0,
			Source: str(), Shared: r.IntN(2) == 0, State: str(), StateSign: str()}
		ch := Change{Component: str(), Kind: str(), From: str(), To: str(), Reboot: r.IntN(2) == 0, Downgrade: r.IntN(2) == 0,
			Unordered: r.IntN(2) == 0, Shared: r.IntN(2) == 0, FlashedBy: str(), Members: r.IntN(3), Moving: r.IntN(3) - 1}
		s := Step{Index: r.IntN(20) - 1, Kind: StepKind(str()), Component: str(),
			Target: version.Target{Version: str(), Scheme: version.Scheme(str()), Pattern: str()},
			Image:  str(), ApplyTime: str(), ApplyTimeFrom: str(), Method: str(), TransferProtocol: str(),
			Targets: list(), Members: list(), SHA256: str(), Shared: r.IntN(2) == 0, After: list(), ResetType: str(),
			Timeout: dur(), Estimate: dur()}
		if r.IntN(2) == 0 {
			m := match()
			s.Match = &m
		}
		for range r.IntN(3) {
			s.Expect = append(s.Expect, providers.Expectation{Component: str(), Match: match(),
				Target: version.Target{Version: str(), Scheme: version.Scheme(str()), Pattern: str()}})
		}
		if r.IntN(4) == 0 {
			s.Learned = &Learned{Key: EstimateKey{Kind: StepKind(str()), Component: str(), AfterBoot: r.IntN(2) == 0},
				Samples: r.IntN(9), Runs: r.IntN(3), Median: dur(), P90: dur()}
		}
		checkAppenders(t, "random", []providers.Component{c}, []Change{ch}, []Step{s})
		if t.Failed() {
			return
		}
	}
}

// OthersOf's digest is of encoding/json's bytes for the components left.
func TestOthersOfDigest(t *testing.T) {
	all := []providers.Component{
		{ID: "NIC.2", Name: "nic <2>", Version: "22.1", Updateable: true, Source: "x"},
		{ID: "BIOS", Name: "BIOS", Version: "1.2", Updateable: true},
		{ID: "NIC.1", Name: "nic \"1\"", SoftwareID: "n", Version: "22.0", State: providers.StatePrevious, StateSign: "é"},
		{ID: "NIC.1", Name: "nic 1", Version: "22.1", Shared: true},
	}
	got := OthersOf(all, all[1:2])
	rest := []providers.Component{all[3], all[2], all[0]} // sorted: id, then source, software id, name, version
	want, err := newCanonical().marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Count != 3 || got.SHA256 != SHA256(want) {
		t.Errorf("OthersOf = %+v, want count 3 and sha256 %s of %s", got, SHA256(want), want)
	}
	// Members equal in every sorted field but their state: the digest
	// is that of the list in id order, whatever order they came in.
	// (More than a dozen: fewer are sorted by insertion, which is stable.)
	ties := []providers.Component{{ID: "A", Version: "0"}}
	for i := range 30 {
		ties = append(ties, providers.Component{ID: fmt.Sprintf("GPU%d", i%3), Version: "1", StateSign: strconv.Itoa(i)})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		shuffled := slices.Clone(ties)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		inOrder := slices.Clone(shuffled)
		slices.SortStableFunc(inOrder, func(a, b providers.Component) int { return cmp.Compare(a.ID, b.ID) })
		if got := OthersOf(shuffled, ties[:1]); *got != *OthersOf(inOrder, ties[:1]) || got.Count != 30 {
			t.Fatalf("OthersOf(%v) = %+v, not that of the list in id order", shuffled, got)
		}
	}
	if OthersOf(all[:1], all[:1]) != nil {
		t.Error("OthersOf of nothing left is not nil")
	}
}
