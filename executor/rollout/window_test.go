package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rackform/rackform/planner/plan"
)

func TestClusterOrder(t *testing.T) {
	now := time.Date(2026, 7, 6, 20, 0, 0, 0, time.UTC)
	win := func(from, to time.Duration) plan.Interval {
		return plan.Interval{Start: now.Add(from), End: now.Add(to)}
	}
	closed := &plan.Cluster{Name: "closed", Windows: []plan.Interval{win(-3*time.Hour, -time.Hour), win(5*time.Hour, 6*time.Hour)}}
	none := &plan.Cluster{Name: "none"}
	opening := &plan.Cluster{Name: "opening", Windows: []plan.Interval{win(3*time.Hour, 5*time.Hour), win(time.Hour, 2*time.Hour)}}
	open := &plan.Cluster{Name: "open", Windows: []plan.Interval{win(0, time.Hour)}}
	never := &plan.Cluster{Name: "never", Windows: []plan.Interval{win(-2*time.Hour, -time.Hour)}}
	none2 := &plan.Cluster{Name: "none2"}

	type row struct {
		Name     string
		Class    WindowClass
		Opens    time.Time
		MayStart bool
	}
	var got []row
	for _, c := range ClusterOrder([]*plan.Cluster{closed, none, opening, open, never, none2}, now) {
		got = append(got, row{c.Cluster.Name, c.Class, c.Opens, c.Class.MayStart()})
	}
	want := []row{
		{"open", WindowOpen, time.Time{}, true},
		{"opening", WindowOpening, now.Add(time.Hour), false},
		{"none", WindowNone, time.Time{}, true},
		{"none2", WindowNone, time.Time{}, true},
		{"closed", WindowClosed, now.Add(5 * time.Hour), false},
		{"never", WindowClosed, time.Time{}, false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ClusterOrder (-want +got):\n%s", d)
	}
}

func TestWindowOpeningBound(t *testing.T) {
	now := time.Date(2026, 7, 6, 20, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   time.Duration
		want WindowClass
	}{{4 * time.Hour, WindowOpening}, {4*time.Hour + time.Second, WindowClosed}, {0, WindowOpen}} {
		cl := &plan.Cluster{Windows: []plan.Interval{{Start: now.Add(c.in), End: now.Add(c.in + time.Hour)}}}
		if got, _ := ClassifyWindow(cl, now); got != c.want {
			t.Errorf("a window opening in %s: class %d, want %d", c.in, got, c.want)
		}
	}
}
