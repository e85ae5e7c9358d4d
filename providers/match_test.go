package providers

import "testing"

func TestMatchSelects(t *testing.T) {
	bios := Component{ID: "2", Name: "System ROM", SoftwareID: "BIOS"}
	cases := []struct {
		name string
		m    Match
		want bool
	}{
		{"software id", Match{SoftwareID: "BIOS"}, true},
		{"other software id", Match{SoftwareID: "BMC"}, false},
		{"id", Match{ID: "2"}, true},
		{"other id", Match{ID: "1"}, false},
		{"name glob", Match{NamePattern: "System*"}, true},
		{"name glob miss", Match{NamePattern: "NIC*"}, false},
		{"bad glob", Match{NamePattern: "["}, false},
		// SoftwareID wins over the other fields when set.
		{"software id first", Match{SoftwareID: "BMC", ID: "2"}, false},
		{"empty", Match{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.Selects(bios); got != c.want {
				t.Errorf("%+v.Selects(bios) = %v, want %v", c.m, got, c.want)
			}
		})
	}
	if _, ok := (Match{ID: "9"}).Find([]Component{bios}); ok {
		t.Error("Find found a component nothing matches")
	}
	if c, ok := (Match{ID: "2"}).Find([]Component{{ID: "1"}, bios}); !ok || c.SoftwareID != "BIOS" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
}
