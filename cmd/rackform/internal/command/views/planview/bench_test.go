package planview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/planner/plan"
)

// scaledPlan is the nexus-lab fixture (40 servers) grown to n servers:
// each server copied with a numbered suffix into the scopes that hold it,
// so the run tree, steps and images keep their shape.
func scaledPlan(b *testing.B, n int) *plan.Plan {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "nexus-lab.plan.json"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	base := p.Servers
	copies := (n + len(base) - 1) / len(base)
	suffix := func(a string, k int) string {
		if a == "" || k == 0 {
			return a
		}
		return fmt.Sprintf("%s-%d", a, k)
	}
	p.Servers = make([]plan.Server, 0, copies*len(base))
	for k := range copies {
		for _, s := range base {
			s.Address, s.Name = suffix(s.Address, k), suffix(s.Name, k)
			s.Changes = slices.Clone(s.Changes)
			for i := range s.Changes {
				s.Changes[i].FlashedBy = suffix(s.Changes[i].FlashedBy, k)
			}
			s.Steps = slices.Clone(s.Steps)
			for i := range s.Steps {
				after := make([]string, len(s.Steps[i].After))
				for j, a := range s.Steps[i].After {
					after[j] = suffix(a, k)
				}
				s.Steps[i].After = after
			}
			p.Servers = append(p.Servers, s)
		}
	}
	for si := range p.Run.Stages {
		for gi := range p.Run.Stages[si].Groups {
			for ci := range p.Run.Stages[si].Groups[gi].Clusters {
				for pi := range p.Run.Stages[si].Groups[gi].Clusters[ci].Phases {
					scopes := p.Run.Stages[si].Groups[gi].Clusters[ci].Phases[pi].Scopes
					for sci := range scopes {
						var all []string
						for k := range copies {
							for _, a := range scopes[sci].Servers {
								all = append(all, suffix(a, k))
							}
						}
						scopes[sci].Servers = all
					}
				}
			}
		}
	}
	if err := plan.CheckSteps(p); err != nil {
		b.Fatal(err)
	}
	return p
}

// show -json and show at two fleet sizes: the time per server stays
// the same from one to the other (issue 33 item 8: show -json took 141 s
// for 100,000 servers, a lookup per server in the list of the servers
// each image goes to).
func BenchmarkShow(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		p := scaledPlan(b, n)
		for _, view := range []struct {
			name  string
			write func(w io.Writer, p *plan.Plan) error
		}{
			{"json", func(w io.Writer, p *plan.Plan) error { return WriteJSON(w, p, "") }},
			// BuildJSON alone, without the encoding that dominates json.
			{"json-model", func(io.Writer, *plan.Plan) error { BuildJSON(p, ""); return nil }},
			{"text", func(w io.Writer, p *plan.Plan) error { return WriteText(w, p, false) }},
		} {
			b.Run(fmt.Sprintf("%s/servers=%d", view.name, len(p.Servers)), func(b *testing.B) {
				for b.Loop() {
					if err := view.write(io.Discard, p); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(p.Servers)), "ns/server")
			})
		}
	}
}

// WriteJSON, which encodes the servers one at a time, writes the bytes
// of encoding the document at once: for the fixtures, and for a plan whose
// strings look like the servers' key or need escaping.
func TestWriteJSONEncodesServersInPlace(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.plan.json"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string]*plan.Plan{f: p, f + " without servers": {}}
		odd := *p
		odd.Servers = slices.Clone(p.Servers)
		odd.Servers[0].Address = "lab/<r&1>/\"servers\": {}"
		odd.Servers[0].Notes = []string{"\n  \"servers\": {}", "<b>é</b>"}
		odd.Warnings = append(slices.Clone(p.Warnings), plan.Message{Summary: "\n  \"servers\": {}\n"})
		cases[f+" with odd strings"] = &odd
		for name, p := range cases {
			var got, want bytes.Buffer
			if err := WriteJSON(&got, p, "ab"); err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(BuildJSON(p, "ab")); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("%s: WriteJSON differs from one encoding (-want +got):\n%s", name, diff)
			}
		}
	}
}
