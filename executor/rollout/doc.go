// Package rollout holds the rollout rules of docs/rollout-rules.md as
// decisions: functions over a plan's data, a scope's counts and the clock
// that say what may happen next. The executor journals what they decide and
// dispatches the operations; a rehearsal's critical path calls the same
// functions, so no rule is coded twice. It imports only planner/plan.
package rollout
