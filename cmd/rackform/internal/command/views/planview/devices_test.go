package planview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/uijson"
	"github.com/rackform/rackform/planner/plan"
)

// TestDevicesCountedApart: the headline's parts count devices as devices
// ("1 of 2 devices not observed", "1 server and 1 device held back"); a
// plan of servers only reads as it always did.
func TestDevicesCountedApart(t *testing.T) {
	srv := func(addr, kind, reason string) plan.Server {
		s := plan.Server{Address: addr, Kind: kind, Action: plan.ActionSkip, Reason: reason}
		if reason == "" {
			s.Action = plan.ActionUpgrade
		}
		return s
	}
	for _, c := range []struct {
		name    string
		servers []plan.Server
		want    string
	}{
		{"servers only", []plan.Server{srv("a", "", plan.ReasonUnreachable), srv("b", "", plan.ReasonHeldBack), srv("c", "", "")},
			"1 of 3 servers not observed: 1 unreachable; 1 server held back; 1 server to upgrade"},
		{"a device not observed", []plan.Server{srv("a", "switch_tray", plan.ReasonUnreachable), srv("b", "power_shelf", ""), srv("c", "", "")},
			"1 of 2 devices not observed: 1 unreachable; 1 server and 1 device to upgrade"},
		{"a server not observed beside devices", []plan.Server{srv("a", "", plan.ReasonUnreachable), srv("b", "power_shelf", ""), srv("c", "", "")},
			"1 of 2 servers not observed: 1 unreachable; 1 server and 1 device to upgrade"},
		{"both not observed, both held back", []plan.Server{srv("a", "", plan.ReasonUnreachable), srv("b", "power_shelf", plan.ReasonCredentialsRefused),
			srv("c", "", plan.ReasonHeldBack), srv("d", "switch_tray", plan.ReasonHeldBack), srv("e", "", "")},
			"2 of 5 servers and devices not observed: 1 unreachable, 1 credentials refused; 1 server and 1 device held back; 1 server to upgrade"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &plan.Plan{Servers: c.servers}
			for _, s := range c.servers {
				switch {
				case s.Action == plan.ActionUpgrade:
					p.Summary.Upgrade++
				default:
					p.Summary.Skip++
				}
				switch {
				case plan.NotObserved(s.Reason):
					p.Summary.NotObserved++
				case s.Reason == plan.ReasonHeldBack:
					p.Summary.HeldBack++
				}
			}
			if got := SummaryLine(p); !strings.HasPrefix(got, c.want) {
				t.Errorf("SummaryLine = %q\nwant it to begin %q", got, c.want)
			}
		})
	}
}

// TestPlannedChangeKind: plan -json's planned_change names a device's
// kind, and has no kind for a server.
func TestPlannedChangeKind(t *testing.T) {
	p, _, _ := makePlan(t, "../../../../../../examples/gpu-rack")
	var stream bytes.Buffer
	if err := newStreamAt(&stream, fixedNow).Plan(p); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for i := range p.Servers {
		kinds[p.Servers[i].Address] = p.Servers[i].Kind
	}
	devices := 0
	for _, line := range strings.Split(strings.TrimSpace(stream.String()), "\n") {
		var msg struct {
			Type   string                     `json:"type"`
			Change map[string]json.RawMessage `json:"change"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type != uijson.TypePlannedChange {
			continue
		}
		var addr, kind string
		_ = json.Unmarshal(msg.Change["address"], &addr)
		raw, has := msg.Change["kind"]
		_ = json.Unmarshal(raw, &kind)
		switch want := kinds[addr]; {
		case want == "" && has:
			t.Errorf("%s, a server, has kind %s", addr, raw)
		case want != "" && kind != want:
			t.Errorf("%s: kind %q, want %q", addr, kind, want)
		case want != "":
			devices++
		}
	}
	if devices == 0 {
		t.Error("no device in examples/gpu-rack's stream")
	}
}
