package schedule

import (
	"testing"
	"time"
)

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:                "45s",
		42 * time.Minute:                "42m",
		4*time.Hour + 12*time.Minute:    "4h12m",
		3 * time.Hour:                   "3h",
		39*time.Hour + 45*time.Minute:   "1d15h45m",
		48 * time.Hour:                  "2d",
		24*time.Hour + 30*time.Minute:   "1d30m",
		25 * time.Hour:                  "1d1h",
		2*time.Minute + 29*time.Second:  "2m",
		59*time.Minute + 45*time.Second: "1h",
	} {
		if got := Duration(d).Human(); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
