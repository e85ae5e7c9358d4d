package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunIterators(t *testing.T) {
	scope := func(id string) Scope { return Scope{ID: id} }
	r := Run{Stages: []Stage{
		{Groups: []Group{{Clusters: []Cluster{
			{ID: "a", Phases: []Phase{{ID: "a.cp", Scopes: []Scope{scope("a1")}}, {ID: "a.c", Scopes: []Scope{scope("a2"), scope("a3")}}}},
			{ID: "b"},
		}}, {Clusters: []Cluster{{ID: "c"}}}}},
		{},
		{Groups: []Group{{Clusters: []Cluster{{ID: "d"}}}}},
	}}
	var ids []string
	for c := range r.Clusters() {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, ids); diff != "" {
		t.Errorf("Clusters (-want +got):\n%s", diff)
	}
	ids = nil
	for c := range r.Clusters() {
		if ids = append(ids, c.ID); c.ID == "c" {
			break
		}
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("Clusters stopped at c (-want +got):\n%s", diff)
	}
	// The yielded cluster is the run's own, not a copy.
	for c := range r.Clusters() {
		c.Name = "x"
	}
	if r.Stages[2].Groups[0].Clusters[0].Name != "x" {
		t.Error("Clusters yields copies")
	}

	c := &r.Stages[0].Groups[0].Clusters[0]
	ids = nil
	for ph, sc := range c.Scopes() {
		ids = append(ids, ph.ID+"/"+sc.ID)
	}
	if diff := cmp.Diff([]string{"a.cp/a1", "a.c/a2", "a.c/a3"}, ids); diff != "" {
		t.Errorf("Scopes (-want +got):\n%s", diff)
	}
	ids = nil
	for _, sc := range c.Scopes() {
		if ids = append(ids, sc.ID); sc.ID == "a2" {
			break
		}
	}
	if diff := cmp.Diff([]string{"a1", "a2"}, ids); diff != "" {
		t.Errorf("Scopes stopped at a2 (-want +got):\n%s", diff)
	}
}
