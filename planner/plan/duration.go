package plan

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration written as Go duration text ("20m0s") so plan
// files stay readable.
type Duration time.Duration

// String formats the duration like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Human is the duration for people, to the minute from a minute on:
// "45s", "42m", "4h12m", "1d15h45m".
func (d Duration) Human() string {
	t := time.Duration(d)
	if t < time.Minute {
		return t.Round(time.Second).String()
	}
	mins := int64(t.Round(time.Minute) / time.Minute)
	var b strings.Builder
	for _, u := range []struct {
		n      int64
		suffix string
	}{{mins / (24 * 60), "d"}, {mins / 60 % 24, "h"}, {mins % 60, "m"}} {
		if u.n > 0 {
			fmt.Fprintf(&b, "%d%s", u.n, u.suffix)
		}
	}
	return b.String()
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"20m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
