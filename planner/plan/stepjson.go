package plan

import (
	"fmt"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// stepJSON is a step as plan files write it: Step's fields in Step's
// order, with its Target written as "version" where Step has it and
// "scheme" and "pattern" after "after", as every format since 1.0 has
// written them. TestStepJSONFields holds it to Step's fields.
type stepJSON struct {
	Index            int                     `json:"index"`
	Kind             StepKind                `json:"kind"`
	Component        string                  `json:"component,omitempty"`
	Match            *providers.Match        `json:"match,omitempty"`
	Version          string                  `json:"version,omitempty"`
	Image            string                  `json:"image,omitempty"`
	ApplyTime        string                  `json:"apply_time,omitempty"`
	ApplyTimeFrom    string                  `json:"apply_time_from,omitempty"`
	Method           string                  `json:"method,omitempty"`
	TransferProtocol string                  `json:"transfer_protocol,omitempty"`
	Targets          []string                `json:"targets,omitempty"`
	Members          []string                `json:"members,omitempty"`
	SHA256           string                  `json:"sha256,omitempty"`
	Shared           bool                    `json:"shared,omitempty"`
	After            []string                `json:"after,omitempty"`
	Scheme           version.Scheme          `json:"scheme,omitempty"`
	Pattern          string                  `json:"pattern,omitempty"`
	ResetType        string                  `json:"reset_type,omitempty"`
	Timeout          Duration                `json:"timeout,omitempty"`
	Expect           []providers.Expectation `json:"expect,omitempty"`
	Estimate         Duration                `json:"estimate"`
	Learned          *Learned                `json:"learned,omitempty"`
}

// MarshalJSON writes s as plan files have always written a step.
func (s Step) MarshalJSON() ([]byte, error) {
	return providers.MarshalRaw(s.fileForm())
}

// fileForm is s as plan files write it. The compact writer encodes it
// directly: through MarshalJSON, encoding/json would check and compact
// every step's bytes a second time.
func (s Step) fileForm() stepJSON {
	return stepJSON{
		Index: s.Index, Kind: s.Kind, Component: s.Component, Match: s.Match,
		Version: s.Target.Version, Image: s.Image,
		ApplyTime: s.ApplyTime, ApplyTimeFrom: s.ApplyTimeFrom, Method: s.Method,
		TransferProtocol: s.TransferProtocol, Targets: s.Targets, Members: s.Members,
		SHA256: s.SHA256, Shared: s.Shared, After: s.After,
		Scheme: s.Target.Scheme, Pattern: s.Target.Pattern,
		ResetType: s.ResetType, Timeout: s.Timeout, Expect: s.Expect,
		Estimate: s.Estimate, Learned: s.Learned,
	}
}

// UnmarshalJSON reads a step as plan files write it, refusing unknown
// fields, and its target with version.ParseTarget: a scheme or pattern
// that cannot be used is an error naming the step.
func (s *Step) UnmarshalJSON(b []byte) error {
	var w stepJSON
	if err := providers.DecodeStrict(b, &w); err != nil {
		return stepError(w, err)
	}
	t, err := version.ParseTarget(w.Version, w.Scheme, w.Pattern)
	if err != nil {
		return stepError(w, err)
	}
	*s = Step{
		Index: w.Index, Kind: w.Kind, Component: w.Component, Match: w.Match,
		Target: t, Image: w.Image,
		ApplyTime: w.ApplyTime, ApplyTimeFrom: w.ApplyTimeFrom, Method: w.Method,
		TransferProtocol: w.TransferProtocol, Targets: w.Targets, Members: w.Members,
		SHA256: w.SHA256, Shared: w.Shared, After: w.After,
		ResetType: w.ResetType, Timeout: w.Timeout, Expect: w.Expect,
		Estimate: w.Estimate, Learned: w.Learned,
	}
	return nil
}

// stepError names the step a decode error is in: its index, kind and
// component as far as they were read.
func stepError(w stepJSON, err error) error {
	name := fmt.Sprintf("step %d", w.Index)
	if w.Kind != "" {
		name += " (" + string(w.Kind)
		if w.Component != "" {
			name += " " + w.Component
		}
		name += ")"
	}
	return fmt.Errorf("%s: %w", name, err)
}
