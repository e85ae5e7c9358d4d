package planview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

// Every view shows the versions the steps apply runs flash, not a copy a
// reviewer could be shown instead (issue 26 item 4: with only a server's
// update step edited, text and markdown still said bmc → 7.10.30 while
// apply flashed 7.99.99; only the images table and show -json's steps
// told).
func TestViewsShowTheVersionsStepsFlash(t *testing.T) {
	p, _, _ := makePlan(t, "../../../../../../examples/nexus-lab")
	var edited *plan.Server
	for i := range p.Servers {
		s := &p.Servers[i]
		for j := range s.Steps {
			if s.Action == plan.ActionUpgrade && s.Steps[j].Component == "bmc" && edited == nil {
				s.Steps[j].Version = "7.99.99"
				edited = s
			}
		}
	}
	if edited == nil {
		t.Fatal("no server of nexus-lab updates its bmc")
	}
	if plan.CheckSteps(p) == nil {
		t.Fatal("CheckSteps accepts the edited plan")
	}
	var from string
	for _, c := range edited.Changes {
		if c.Component == "bmc" {
			from = c.From
		}
	}
	want := "bmc " + from + " → 7.99.99"

	var text, md, page, stream bytes.Buffer
	if err := WriteText(&text, p, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, p, "", 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, p, ""); err != nil {
		t.Fatal(err)
	}
	if err := NewStreamAt(&stream, fixedNow).Plan(p); err != nil {
		t.Fatal(err)
	}
	js := BuildJSON(p, "")
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String(), "plan -json": stream.String()} {
		line := lineWith(out, edited.Address)
		if !strings.Contains(line, want) {
			t.Errorf("%s shows %s as %q, want %q (what its step flashes)", name, edited.Address, line, want)
		}
	}
	if !strings.Contains(md.String(), "| bmc | "+from+" | 7.99.99 | 1 |") {
		t.Errorf("the markdown's version table does not count the edited server's 7.99.99:\n%s", md.String())
	}
	got := js.Servers[edited.Address]
	found := false
	for _, c := range got.Changes {
		found = found || c.Component == "bmc" && c.To == "7.99.99"
	}
	if !found {
		t.Errorf("show -json lists %s's changes as %+v, want bmc to 7.99.99", edited.Address, got.Changes)
	}
	// The plan given is left as it was.
	for _, c := range edited.Changes {
		if c.Component == "bmc" && c.To == "7.99.99" {
			t.Error("rendering changed the plan")
		}
	}
}

// lineWith is the first line of out naming addr, or "".
func lineWith(out, addr string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, addr) && strings.Contains(l, "→") {
			return l
		}
	}
	return ""
}
