package planner

import (
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// The estimate model: a fixed typical duration per step kind (plan's
// Typical*), capped by the step's timeout when it has one, unless
// durations of earlier runs were learned for the step's class
// (Options.Estimates, estimate.go): then the median of those, capped
// alike. Waits after racks and stages are added at full length; pauses
// and approvals count as zero, because they last as long as people take.

func capped(typical, timeout time.Duration) plan.Duration {
	if timeout > 0 && timeout < typical {
		return plan.Duration(timeout)
	}
	return plan.Duration(typical)
}

// verifyTimeout is how long wait_ready waits for a server of s's role.
func verifyTimeout(st *config.Strategy, s *config.Server) time.Duration {
	var t time.Duration
	switch s.Role {
	case config.RoleControlPlane, config.RoleControlPlaneSpare:
		t = st.ControlPlane.VerifyTimeout
	case config.RoleManagement:
		t = st.Management.VerifyTimeout
	case config.RoleCompute, config.RoleDevice:
		// Devices go rack by rack with the compute phase's settings.
		t = st.Compute.VerifyTimeout
	}
	if t == 0 {
		t = st.VerifyTimeout
	}
	return t
}

// steps lays out one server's upgrade (docs/rollout-rules.md rules 3, 21 and 30): drain and
// shutdown when the host goes down, one update per changed firmware
// component, the runtime reimage, one reset that applies what was staged,
// wait until healthy at every target version, uncordon. It returns the
// steps, in p.stepBuf until the next call, and the number of host
// reboots.
func (p *planning) steps(s *config.Server, targets []target, elsewhere map[string]bool) ([]plan.Step, int) {
	st := s.Cluster.Strategy
	down := false
	var reimage *config.Component
	var changed []*config.Component
	how := map[*config.Component]target{}
	for _, t := range targets {
		if elsewhere[t.c.Name] {
			continue // flashed by another server on the same BMC
		}
		changed = append(changed, t.c)
		how[t.c] = t
	}
	for _, c := range changed {
		if s.IsDevice() {
			break // a device has no host: no drain, power-off or reboot
		}
		if c.Reboot || c.Kind == config.KindRuntime {
			down = true
		}
		if c.Kind == config.KindRuntime && c.Method == config.MethodReimage {
			reimage = c
		}
	}
	// Laid out in p's buffer (see layout), not in a list of their own.
	out := p.stepBuf[:0]
	add := func(step plan.Step) {
		step.Index = len(out) + 1
		out = append(out, step)
	}
	if down {
		if st.Drain != nil {
			add(plan.Step{Kind: plan.StepDrain, Timeout: plan.Duration(st.DrainTimeout), Estimate: capped(plan.TypicalDrain, st.DrainTimeout)})
		}
		add(plan.Step{Kind: plan.StepShutdown, Timeout: plan.Duration(st.ShutdownTimeout), Estimate: capped(plan.TypicalShutdown, st.ShutdownTimeout)})
	}
	// Firmware before the runtime: the new image may need the new firmware.
	for _, kind := range []string{config.KindFirmware, config.KindRuntime} {
		for _, c := range changed {
			if c.Kind != kind || c == reimage {
				continue
			}
			est := plan.TypicalFirmwareUpdate
			if c.Kind == config.KindRuntime {
				est = plan.TypicalRuntimeUpdate
			}
			method := c.Method
			if s.UpdateMethod != "" {
				method = s.UpdateMethod
			}
			for _, batch := range updateBatches(how[c]) {
				m := p.match(s, c)
				step := plan.Step{
					Kind: plan.StepUpdate, Component: c.Name, Match: &m, Target: p.want(c), SHA256: c.SHA256,
					Image: c.Image, ApplyTime: c.ApplyTime, Method: method, Estimate: plan.Duration(est),
					Shared: how[c].shared, Members: batch.members, Targets: batch.targets,
				}
				if up := how[c].up; up != nil {
					// Exactly what the BMC said it takes, decided now so
					// apply does not choose again.
					step.Method, step.TransferProtocol = up.Method, up.TransferProtocol
					if up.ApplyTimeFrom != "" || up.ApplyTime != "" {
						step.ApplyTime, step.ApplyTimeFrom = up.ApplyTime, up.ApplyTimeFrom
					}
				}
				add(step)
			}
		}
	}
	reboots := 0
	switch {
	case reimage != nil:
		// Reimaging boots the host, which also applies staged firmware.
		m := p.match(s, reimage)
		add(plan.Step{
			Kind: plan.StepReimage, Component: reimage.Name, Match: &m, Target: p.want(reimage), SHA256: reimage.SHA256,
			Image: reimage.Image, Method: reimage.Method, Estimate: plan.Duration(plan.TypicalReimage),
		})
		reboots = 1
	case down:
		// The host is off after shutdown: "On" boots it and applies what
		// was staged for the next reset.
		add(plan.Step{Kind: plan.StepReset, ResetType: "On", Estimate: plan.Duration(plan.TypicalReset)})
		reboots = 1
	}
	vt := verifyTimeout(st, s)
	wait := plan.Step{Kind: plan.StepWaitReady, Timeout: plan.Duration(vt), Estimate: capped(plan.TypicalWaitReady, vt)}
	if !down {
		wait.Estimate = capped(plan.TypicalNoRebootRefresh, vt)
	}
	// Expect every in-scope component at target, not only the changed
	// ones: a reset must not have rolled anything back.
	comps := p.inScopeComponents(p.channel.releaseOf(s.Cluster), s)
	if len(comps) > 0 {
		wait.Expect = make([]providers.Expectation, 0, len(comps))
	}
	for _, c := range comps {
		if elsewhere[c.Name] {
			continue // verified by the server whose step flashes it
		}
		wait.Expect = append(wait.Expect, providers.Expectation{
			Component: c.Name, Match: p.match(s, c), Target: p.want(c),
		})
	}
	add(wait)
	if down && st.Uncordon != nil {
		add(plan.Step{Kind: plan.StepUncordon, Timeout: plan.Duration(st.Uncordon.Timeout), Estimate: capped(plan.TypicalUncordon, st.Uncordon.Timeout)})
	}
	p.stepBuf = out
	if ps := p.servers[address(s)]; ps != nil {
		out = learn(p.opts.Estimates, ps.Identity, out)
	}
	return out, reboots
}

// want is c's target version, made once per planning (Targets are
// read-only).
func (p *planning) want(c *config.Component) version.Target {
	t, ok := p.wants[c]
	if !ok {
		t = version.TargetOf(c.Version)
		p.wants[c] = t
	}
	return t
}

// match is c's rule as apply checks it on s: with the count of active
// members plan saw when the configuration sets none, so a member that
// disappears during the upgrade (a GPU that falls off the bus) is never
// taken for one at target.
func (p *planning) match(s *config.Server, c *config.Component) providers.Match {
	m := providerMatch(c.Match)
	if m.Count == 0 {
		m.Count = p.members[address(s)][c.Name]
	}
	return m
}

// updateBatch is one update request: the members it is for and the
// Targets that name them.
type updateBatch struct {
	members, targets []string
}

// updateBatches splits one component's update into requests: one naming
// every member not at the target where the BMC takes a Target per member
// (as many per request as it allows), else one with the Targets the BMC
// said it takes (none, or the System or Manager a version was read from),
// for all of them.
func updateBatches(t target) []updateBatch {
	up := t.up
	if up == nil || len(up.Targets) == 0 || len(up.Targets) != len(up.Members) {
		var targets []string
		if up != nil {
			targets = append([]string(nil), up.Targets...)
		}
		return []updateBatch{{members: t.moving, targets: targets}}
	}
	uri := map[string]string{}
	for i, id := range up.Members {
		uri[id] = up.Targets[i]
	}
	var all updateBatch
	for _, id := range t.moving {
		if u, ok := uri[id]; ok {
			all.members = append(all.members, id)
			all.targets = append(all.targets, u)
		}
	}
	per := up.TargetsPerRequest
	if per <= 0 || per >= len(all.members) {
		return []updateBatch{all}
	}
	var out []updateBatch
	for i := 0; i < len(all.members); i += per {
		j := min(i+per, len(all.members))
		out = append(out, updateBatch{members: all.members[i:j], targets: all.targets[i:j]})
	}
	return out
}
