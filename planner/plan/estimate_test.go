package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
)

func TestKeyOf(t *testing.T) {
	id := providers.Identity{UUID: "u", SerialNumber: "sn", Manufacturer: "Contoso", Model: "R640"}
	rebooted := []Step{{Kind: StepShutdown}, {Kind: StepUpdate, Component: "bios"}, {Kind: StepReset}, {Kind: StepWaitReady}}
	refreshed := []Step{{Kind: StepUpdate, Component: "nic"}, {Kind: StepWaitReady}}
	reimaged := []Step{{Kind: StepDrain}, {Kind: StepReimage, Component: "runtime"}, {Kind: StepWaitReady}, {Kind: StepUncordon}}
	for _, tc := range []struct {
		steps []Step
		i     int
		want  EstimateKey
		text  string
	}{
		{rebooted, 0, EstimateKey{Kind: StepShutdown, Manufacturer: "Contoso", Model: "R640"}, "shutdown on Contoso R640"},
		{rebooted, 1, EstimateKey{Kind: StepUpdate, Component: "bios", Manufacturer: "Contoso", Model: "R640"}, "update bios on Contoso R640"},
		{rebooted, 3, EstimateKey{Kind: StepWaitReady, Manufacturer: "Contoso", Model: "R640", AfterBoot: true}, "wait_ready after a boot on Contoso R640"},
		{refreshed, 1, EstimateKey{Kind: StepWaitReady, Manufacturer: "Contoso", Model: "R640"}, "wait_ready on Contoso R640"},
		{reimaged, 1, EstimateKey{Kind: StepReimage, Component: "runtime", Manufacturer: "Contoso", Model: "R640"}, "reimage runtime on Contoso R640"},
		{reimaged, 2, EstimateKey{Kind: StepWaitReady, Manufacturer: "Contoso", Model: "R640", AfterBoot: true}, "wait_ready after a boot on Contoso R640"},
		{reimaged, 3, EstimateKey{Kind: StepUncordon, Manufacturer: "Contoso", Model: "R640"}, "uncordon on Contoso R640"},
	} {
		got := KeyOf(id, tc.steps, tc.i)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("KeyOf(step %d of %v) (-want +got):\n%s", tc.i, tc.steps, diff)
		}
		if got.String() != tc.text {
			t.Errorf("%+v reads %q, want %q", got, got.String(), tc.text)
		}
	}
}

// The fallback goes model → vendor → any server, and a key without a
// model or a vendor starts where it can.
func TestEstimateKeyCoarser(t *testing.T) {
	for _, tc := range []struct {
		from   EstimateKey
		levels []string
		texts  []string
	}{
		{EstimateKey{Kind: StepUpdate, Component: "bios", Manufacturer: "Contoso", Model: "R640"},
			[]string{LevelModel, LevelVendor, LevelKind},
			[]string{"update bios on Contoso R640", "update bios on Contoso (any model)", "update bios (any server)"}},
		{EstimateKey{Kind: StepReset, Manufacturer: "Contoso"},
			[]string{LevelVendor, LevelKind},
			[]string{"reset on Contoso (any model)", "reset (any server)"}},
		{EstimateKey{Kind: StepReset, Model: "R640"},
			[]string{LevelModel, LevelKind},
			[]string{"reset on R640", "reset (any server)"}},
		{EstimateKey{Kind: StepShutdown}, []string{LevelKind}, []string{"shutdown (any server)"}},
	} {
		var levels, texts []string
		k := tc.from
		for {
			levels, texts = append(levels, k.Level()), append(texts, k.String())
			next, ok := k.Coarser()
			if !ok {
				break
			}
			if next.Kind != k.Kind || next.Component != k.Component || next.AfterBoot != k.AfterBoot {
				t.Errorf("Coarser of %+v changed what the step is: %+v", k, next)
			}
			k = next
		}
		if diff := cmp.Diff(tc.levels, levels); diff != "" {
			t.Errorf("levels from %+v (-want +got):\n%s", tc.from, diff)
		}
		if diff := cmp.Diff(tc.texts, texts); diff != "" {
			t.Errorf("names from %+v (-want +got):\n%s", tc.from, diff)
		}
	}
}
