package planview

import (
	"bytes"
	"slices"
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
	for _, tt := range []struct {
		name string
		// edit changes the first bmc update step of a server, at index i
		// of its steps, and returns what its line must show, given the
		// version the change goes from and to.
		edit func(s *plan.Server, i int, from, to string) []string
	}{
		{"a step's version edited", func(s *plan.Server, i int, from, to string) []string {
			s.Steps = slices.Clone(s.Steps) // shared with servers planned alike
			s.Steps[i].Target.Version = "7.99.99"
			return []string{"bmc " + from + " → 7.99.99"}
		}},
		// Issue 33 item 3: a second bmc step inserted before the real one,
		// the steps numbered again; the views said only bmc → 7.10.30.
		{"a step inserted before it", func(s *plan.Server, i int, from, to string) []string {
			st := s.Steps[i]
			st.Target.Version = "7.99.99"
			s.Steps = slices.Insert(slices.Clone(s.Steps), i, st)
			for j := range s.Steps {
				s.Steps[j].Index = j + 1
			}
			return []string{"bmc " + from + " → 7.99.99", "bmc 7.99.99 → " + to}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _ := makePlan(t, "../../../../../../examples/nexus-lab")
			var edited *plan.Server
			var want []string
			for i := range p.Servers {
				s := &p.Servers[i]
				for j := range s.Steps {
					if s.Action == plan.ActionUpgrade && s.Steps[j].Component == "bmc" && edited == nil {
						edited = s
						for _, c := range s.Changes {
							if c.Component == "bmc" {
								want = tt.edit(s, j, c.From, c.To)
							}
						}
						break
					}
				}
			}
			if edited == nil || len(want) == 0 {
				t.Fatal("no server of nexus-lab updates its bmc")
			}
			if plan.CheckSteps(p) == nil {
				t.Fatal("CheckSteps accepts the edited plan")
			}
			var text, md, page, stream bytes.Buffer
			if err := WriteText(&text, p, false); err != nil {
				t.Fatal(err)
			}
			if err := WriteMarkdown(&md, p, "", 0); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTMLCells(&page, p, "", PlanCells()); err != nil {
				t.Fatal(err)
			}
			if err := newStreamAt(&stream, fixedNow).Plan(p); err != nil {
				t.Fatal(err)
			}
			js := BuildJSON(p, "")
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String(), "plan -json": stream.String()} {
				line := lineWith(out, edited.Address)
				for _, w := range want {
					if !strings.Contains(line, w) {
						t.Errorf("%s shows %s as %q, want %q (what its steps flash)", name, edited.Address, line, w)
					}
				}
			}
			for _, w := range want {
				f := strings.Fields(w) // bmc FROM → TO
				if row := "| bmc | " + f[1] + " | " + f[3] + " | 1 |"; !strings.Contains(md.String(), row) {
					t.Errorf("the markdown's version table lacks %q for the edited server:\n%s", row, md.String())
				}
				found := false
				for _, c := range js.Servers[edited.Address].Changes {
					found = found || c.Component == "bmc" && c.From == f[1] && c.To == f[3]
				}
				if !found {
					t.Errorf("show -json lists %s's changes as %+v, want %s", edited.Address, js.Servers[edited.Address].Changes, w)
				}
			}
			// The plan given is left as it was.
			for _, c := range edited.Changes {
				if c.Component == "bmc" && c.To == "7.99.99" {
					t.Error("rendering changed the plan")
				}
			}
		})
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
