// Package rehearsal runs a plan's own executor on a virtual clock against
// an in-process simulated copy of the fleet the plan observed, so that a
// rollout of days replays in seconds with the decisions apply would make:
// where a threshold holds or breaches, where a gate or a pause waits, how
// each cluster fits its maintenance window. Faults come from a scenario
// (scenario.go, docs/rehearsal.md); the result is a schedule (package
// rehearsal/schedule). It touches no BMC and no state directory.
package rehearsal
