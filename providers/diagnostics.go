package providers

import (
	"errors"
	"strings"
)

// Severity of a Diagnostic.
type Severity int

const (
	Error Severity = iota + 1
	Warning
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "unknown"
}

// Diagnostic is a provider's message: a short summary phrase and sentences
// of detail. Server names the server it is about, if any. Never include
// credentials.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Summary  string   `json:"summary"`
	Detail   string   `json:"detail,omitempty"`
	Server   string   `json:"server,omitempty"`
}

// Diagnostics is a list of Diagnostic.
type Diagnostics []Diagnostic

// Errorf is a shorthand for an error diagnostic list.
func Errorf(server, summary, detail string) Diagnostics {
	return Diagnostics{{Severity: Error, Summary: summary, Detail: detail, Server: server}}
}

// HasErrors reports whether any diagnostic is an error.
func (d Diagnostics) HasErrors() bool {
	for _, x := range d {
		if x.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns the errors as one error, or nil.
func (d Diagnostics) Err() error {
	var errs []error
	for _, x := range d {
		if x.Severity == Error {
			errs = append(errs, errors.New(x.String()))
		}
	}
	return errors.Join(errs...)
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Server != "" {
		b.WriteString(d.Server)
		b.WriteString(": ")
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString(": ")
		b.WriteString(d.Detail)
	}
	return b.String()
}

// SummaryUnavailable marks a diagnostic that says the provider itself
// could not complete a call: its plugin process exited (or could not be
// restarted), not that the server or its BMC failed. Whether the call took
// effect on the BMC is unknown, so the caller treats the step as
// interrupted, never as failed, and resumes it from its journal as after
// a crash of its own (poll a recorded task, find an accepted update,
// re-run an idempotent step).
const SummaryUnavailable = "Provider unavailable"

// Unavailable returns the error diagnostic SummaryUnavailable marks.
func Unavailable(server, detail string) Diagnostics {
	return Errorf(server, SummaryUnavailable, detail)
}

// Unavailable reports whether d holds a SummaryUnavailable error: the
// call failed because of the provider, not the server.
func (d Diagnostics) Unavailable() bool {
	for _, x := range d {
		if x.Severity == Error && x.Summary == SummaryUnavailable {
			return true
		}
	}
	return false
}

// SummaryNoAnswer marks an error diagnostic of a call whose BMC did not
// answer at all: the connection refused, reset or closed, or no answer in
// time. A BMC that restarts (after its own flash, or in the middle of
// one) looks like this for minutes, so a caller polling a task it knows
// is in flight polls again rather than failing the step at once. Any
// answer of the BMC, an error status included, is not marked.
const SummaryNoAnswer = "BMC did not answer"

// NoAnswer reports whether d holds a SummaryNoAnswer error.
func (d Diagnostics) NoAnswer() bool {
	for _, x := range d {
		if x.Severity == Error && x.Summary == SummaryNoAnswer {
			return true
		}
	}
	return false
}
