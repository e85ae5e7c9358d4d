package executor

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Stranded is a server a run left out of service: powered off, drained
// (cordoned by the drain hook, not uncordoned), or with an image staged
// for its next boot; Recover says what brings it back. A server in flight
// in a running apply is not stranded: its next steps bring it back.
type Stranded struct {
	Server     string    `json:"server"`
	State      StateName `json:"state"`
	Reason     string    `json:"reason,omitempty"`
	PoweredOff bool      `json:"powered_off,omitempty"`
	Drained    bool      `json:"drained,omitempty"`
	// Staged lists "component version" images that become active at the
	// server's next boot.
	Staged []string `json:"staged,omitempty"`
	// Recover is the command that brings the server back, with a few
	// words where a command alone would not say enough.
	Recover string `json:"recover"`
}

// What says what the server was left as, e.g. "powered off, drained, bios
// 2.80 staged for the next boot".
func (s Stranded) What() string {
	var parts []string
	if s.PoweredOff {
		parts = append(parts, "powered off")
	}
	if s.Drained {
		parts = append(parts, "drained")
	}
	if len(s.Staged) > 0 {
		parts = append(parts, strings.Join(s.Staged, ", ")+" staged for the next boot")
	}
	return strings.Join(parts, ", ")
}

// stranded lists the servers left out of service, in plan order; servers
// in flight only with inFlight (the run is ending, or not running: their
// steps wait for the next apply).
func (m *model) stranded(inFlight bool) []Stranded {
	var out []Stranded
	for _, n := range slices.SortedFunc(maps.Keys(m.mayStrand), func(a, b *node) int { return a.seq - b.seq }) {
		s := n.sv
		if !n.st.Name.Terminal() && !inFlight {
			continue
		}
		out = append(out, Stranded{
			Server: n.id, State: n.st.Name, Reason: n.st.Reason,
			PoweredOff: s.off, Drained: s.drained, Staged: append([]string(nil), s.staged...),
			Recover: recoverCommand(n),
		})
	}
	return out
}

// trackStrand keeps n in mayStrand while a step has begun on it and it is
// off, drained or has staged images.
func (m *model) trackStrand(n *node) {
	s := n.sv
	if n.kind == KindServer && s != nil && s.begun && (s.off || s.drained || len(s.staged) > 0) {
		if m.mayStrand == nil {
			m.mayStrand = map[*node]struct{}{}
		}
		m.mayStrand[n] = struct{}{}
		return
	}
	delete(m.mayStrand, n)
}

// recoverCommand says what brings a stranded server back.
func recoverCommand(n *node) string {
	switch {
	case !n.st.Name.Terminal():
		// In flight when the run stopped: resuming the run finishes its
		// steps.
		return "resume the run: " + NextAction{Kind: NextApply}.Ref()
	case n.st.Name == Completed || (n.sv.drained && !n.sv.off && len(n.sv.staged) == 0):
		// Upgraded and healthy, or never shut down: only the node's
		// cordon is left (the uncordon hook failed, or the drain hook
		// failed and the server was not touched).
		set := clusterOf(n).cluster.Settings
		if len(set.UncordonHook) > 0 {
			return "uncordon it: " + hookCommand(set.UncordonHook, hookEnv(n))
		}
	}
	cmd := NextAction{Kind: NextPlan, Target: n.id}.Ref()
	if n.srv.IsDevice() {
		// A device has no host to power on or uncordon: what brings it
		// back is its controller answering with the version it was sent.
		if n.st.Reason == ReasonUnhealthy {
			return "the device needs a repair or a replace; check that its controller answers and its firmware version reads back, then: " + cmd
		}
		return "check that the device's controller answers and its firmware version reads back, then plan it again, which brings it back with its upgrade: " + cmd
	}
	if n.st.Reason == ReasonUnhealthy {
		return "it needs a repair or a replace; then: " + cmd
	}
	return "plan it again, which brings it back with its upgrade: " + cmd + " (or power it on and uncordon it by hand)"
}

// hookEnv is the environment a hook of server n runs with.
func hookEnv(n *node) []string {
	srv := n.srv
	return []string{
		"RACKFORM_SERVER=" + srv.Name,
		"RACKFORM_NODE=" + nodeName(srv),
		"RACKFORM_RACK=" + srv.Rack,
		"RACKFORM_CLUSTER=" + srv.Cluster,
		"RACKFORM_ADDRESS=" + srv.Address,
	}
}

// hookCommand is a hook as a shell command line, for a person to run.
func hookCommand(argv, env []string) string {
	parts := []string{"env"}
	for _, e := range env {
		parts = append(parts, shellQuote(e))
	}
	for _, a := range argv {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
