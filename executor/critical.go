package executor

import (
	"github.com/rackform/rackform/providers"
)

// Servers upgraded although Critical (rule 50). The plan holds back a
// server whose BMC reports health Critical unless its configuration says
// upgrade_when_critical, with a reason; such a server's plan records it
// (plan.Server.UpgradeWhenCritical). Apply then:
//   - does not hold it back before its first step: its health at apply is
//     the plan's (a change is drift, rule 26), and the pre-flight event
//     says it is upgraded although Critical, and why;
//   - accepts it back from every wait for readiness with any health its
//     BMC reports, once it is on and reports its versions: it was Critical
//     before, so it cannot come back less healthy than it was. On and
//     Critical is not a read-only filesystem for it (remediation.go);
//   - says the health it came back with in that wait's step_completed
//     event and in the server's completed state: healthy again, or
//     still Critical.

// cameBack is the completion message of a wait for readiness of a server
// upgraded although Critical: the health it came back with, in words.
// Any other op keeps msg.
func cameBack(o *opRun, res *providers.ApplyResult, msg string) string {
	if o.kind != opApply || o.pstep.Kind != providers.StepWaitReady || !o.pstep.AcceptCritical {
		return msg
	}
	health := ""
	if res != nil && res.Observation != nil {
		health = res.Observation.Health
	}
	switch health {
	case "OK":
		return "ready: on, at target and healthy again (health OK); it was Critical before the upgrade"
	case "Critical":
		return "ready: on and at target, still health Critical as before the upgrade; accepted, as its upgrade_when_critical says"
	case "":
		return "ready: on and at target; its BMC did not say its health with it (it was Critical before the upgrade)"
	}
	return "ready: on and at target with health " + health + "; it was Critical before the upgrade"
}

// criticalNote is what a server upgraded although Critical says when it
// completes: the reviewed reason, then how its last wait for readiness
// found it.
func criticalNote(reason, waited string) string {
	if waited == "" {
		return "upgraded although Critical (" + reason + ")"
	}
	return "upgraded although Critical (" + reason + "): " + waited
}
