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
	t = t.Round(time.Minute)
	days := t / (24 * time.Hour)
	t -= days * 24 * time.Hour
	s := strings.TrimSuffix(t.String(), "0s")
	s = strings.TrimSuffix(s, "h0m")
	if strings.HasSuffix(t.String(), "h0m0s") {
		s += "h"
	}
	switch {
	case days > 0 && t == 0:
		return fmt.Sprintf("%dd", days)
	case days > 0:
		return fmt.Sprintf("%dd%s", days, s)
	}
	return s
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
