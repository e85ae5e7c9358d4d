// Package executor applies a plan: the rollout state machine of
// docs/rollout-rules.md, the journal that makes apply resumable, the state lock,
// and the event stream. It imports only planner/plan and the providers
// contract; the CLI wires concrete providers, backends and views.
//
// # API for the CLI
//
//	e, err := executor.New(executor.Options{
//		Plan: p, PlanSHA256: sha, PlanFile: file,       // plan.Decode'd, plan.SHA256(file)
//		Providers: map[string]providers.Provider{...},  // by plan.Server.Provider
//		Backend:   dir,                                 // state.Open(".rackform")
//		Events:    view,                                // a Sink: the CLI's JSON, live or plain view
//		LockTimeout: flagLockTimeout,
//	})
//	out, err := e.Run(ctx, hard)  // ctx: first SIGINT/SIGTERM; hard: second
//	// out.Status → exit code, in the CLI (completed 0, completed_with_failures
//	// 4, failed 1, paused/stopped 3, interrupted 130)
//
// Refusals come back as errors and touch nothing: ErrAlreadyApplied
// (rule 25), ErrRunFailed, ErrExpired (not_after; only a fresh start:
// a started run is resumed and continued after it; a rehearsal sets
// Options.AllowExpired), *LockedError (holder,
// since, plan, and the force-unlock ID), and a missing provider. The CLI
// checks the file itself (plan.Decode), -expect-sha256, plugin hashes and
// sensitive inputs before calling New.
//
// A lock whose holder is an apply of this host that no longer runs (the
// pid is gone: killed or crashed) is taken over by Run, with a notice in
// its run_started record and apply_started event (Options.HolderGone); a
// holder on another host is never taken over.
//
// Commands that work from any machine sharing the backend:
//
//	rackform continue       sha, _ := b.CurrentPlan(ctx); file, _ := b.LoadPlan(ctx, sha)
//	                        → New(...).Continue(ctx), then Run
//	rackform approve GATE   → Approve(ctx, gate), then Run
//	rackform stop           → Stop(ctx)            (a running apply obeys it)
//	rackform skip ADDR      → Skip(ctx, addr)      (a running apply obeys it)
//	rackform status [-json] → Status(ctx)          (*Status marshals as the JSON form)
//	rackform force-unlock ID → executor.ForceUnlock(ctx, b, id)
//
// Events carry changes only: a view that starts on a resumed run (or
// `status`) draws the initial picture from Status, then applies events.
// After a hard stop the journal still shows the servers in flight as
// running; the next Run resumes them.
//
// Control operations validate against the replayed state and append one
// record; they take no lock. A running apply reads the journal between
// scheduling decisions and every PollInterval while it waits. Outcome.Next
// (and Status.Next) says what moves the run on as data (NextAction: a
// continue, the approval of gate stage.prod.gate.qa, an apply of the plan
// file); the CLI renders the command lines with the options the run was
// driven with, and its JSON outputs carry each one's canonical command
// ("rackform approve stage.prod.gate.qa"). A message for people names the
// actions it suggests by reference, in their places in its sentence
// ("waiting for approval: {{approve stage.prod.gate.qa}}", NextAction.Ref),
// and whoever shows it renders them (RenderText): the executor writes no
// command line of the CLI (TestNoCommandLinesBelowTheCLI). Journals
// written before carry the command lines in their messages, which read as
// they were written.
//
// # Scheduling
//
// One goroutine (the loop in Run) owns all state and makes every decision;
// workers only call providers and hooks and report back on a channel. The
// decisions are level-triggered ("given this state, what may start now?"),
// so the same code resumes from a replayed journal. Each piece of state has
// one owner: the model (model.go, server.go: the run tree and each
// server's progress) changes only by journal records; the journal
// (journal.go) writes and reads them and is the one place where records
// become durable before the operations they announce start; the opTable
// (optable.go) is the operations in flight and the hook deadlines; the
// runner (run.go) schedules from them (schedule.go, scope.go, decide.go)
// and handles what workers report (handle.go). Per docs/rollout-rules.md:
//
//   - Stages run in order; a stage is completed when its groups, after-gates
//     and after-wait are done; the wait and the after-gates start together
//     (1, 19). Before-gates make the stage pending(approval) (18).
//   - Groups run in parallel; a group's clusters run one at a time, chosen
//     by window class at that moment (open, opening within 4h, none, closed;
//     ties in plan order). Only an open or absent window starts a cluster;
//     blocked ones are pending(window) and the next is tried; when all are
//     blocked the run waits for the earliest opening. Windows never
//     interrupt a started cluster (2, 20).
//   - Phases run in order; scopes of a phase in order (3, 6). Servers of a
//     scope start in plan order up to max_unavailable (7); a "serial" scope
//     runs one at a time and stops at a down server; no second
//     control-plane server of a cluster starts while one is in flight or
//     failed after being touched (4).
//   - N excludes skipped servers; when apply-time skips shrink N, required
//     is recomputed (percent: ceil(v·N/100); count: min(v, N)); the budget
//     stays as planned (9, 10). A scope is breached when failed > budget or
//     succeeded + not-yet-terminal < required (11). A breach stops new
//     starts everywhere; in-flight servers finish all their steps; the scope
//     and its ancestors become paused(threshold) or failed(threshold) per
//     on_breach; a stage whose cluster failed fails, or pauses when the
//     stage's on_breach is "pause" (12). Continue re-evaluates: still
//     breached ⇒ stays paused with the reason and what to skip: the scope
//     or its not-started servers, never the failed (terminal) ones (15, 23).
//   - Rule 13 and waits: the next scope starts as soon as succeeded ≥
//     required only when the scope has neither wait_after nor pause_after.
//     With a wait, the wait starts when the scope is terminal (the last
//     straggler done) and the next scope starts when it ends (16). With
//     pause_after (not on the last scope of a phase), the run pauses
//     (after_rack) when the scope is terminal; its wait runs meanwhile
//     (17). Once a scope met its threshold it is never breached afterwards;
//     later failures are counted and reported (13, 14).
//   - A pending gate, a breach, or a pause ends Run with OutcomePaused once
//     nothing is in flight; timed waits (wait_after, windows) are waited in
//     the process.
//   - Stop (22): nothing new starts, in-flight servers finish their steps,
//     outcome stopped; the next Run or Continue lifts it. Graceful ctx
//     cancellation: nothing new starts; operations that only read or wait
//     are given up at once (observe, verify, task polls, wait_ready, hooks,
//     shutdown and power_on, which run again harmlessly, and an update or
//     reset whose task URI is journaled); an update or reset before its
//     task URI is journaled, and a reimage, finish. Given-up operations stay
//     in flight in the journal and the next Run resumes them; outcome
//     interrupted. Hard cancellation: Run returns at once, after its
//     cancelled provider calls return.
//   - Skip (23) marks the target and its non-terminal descendants skipped.
//     A server whose steps have not begun is skipped at once. One whose
//     steps began is never left powered off or drained silently: its
//     operation in flight finishes, then its safety steps run (ops
//     "safety:power_on" when it was shut down, "safety:wait_ready" (on and
//     healthy, no versions) after a boot, "safety:uncordon" when the drain
//     hook ran), and only then is it skipped; a skipped scope lets the next
//     one start once those are done.
//   - A provider call that fails with providers.SummaryUnavailable (the
//     plugin process died) is not a server failure: nothing is journaled,
//     the op stays in flight, and it is resumed from the journal exactly as
//     after a crash of apply (poll the task, find the accepted update,
//     re-run an idempotent step), after the CLI's provider wrapper
//     restarted the plugin. The worker then asks the provider to Describe
//     itself: still unavailable (it could not be restarted), or five
//     failures under one op, and the run stops once nothing is in flight:
//     outcome stopped(provider_unavailable), servers resumable.
//
// Virtual time: when Options.Clock implements Virtual (internal/vclock),
// the same loop runs on simulated time, for rehearsals. Every worker is an
// actor of the clock and waits for time only through its Sleep (task
// polls, the remediation watch; the hook deadlines stay the scheduler's);
// a worker parks before each message to the scheduler (results, progress,
// task hand-offs). The scheduler settles the clock, takes the parked
// messages sorted by the server's position in the plan and the op, and
// when none waits moves the clock to the next wake-up, its own included
// (a wait's end, a window, a hook's deadline; the poll interval only while
// another worker may write the journal), so a rehearsal costs a pass per
// event, not one per simulated poll interval. The journal and the events
// are then the same on every run, and hours pass in milliseconds
// (virtual_test.go, virtual_wake_test.go).
//
// Outcomes: completed (every planned server at target or skipped before
// its steps began), completed_with_failures (some failed, were skipped
// after their steps began, or were left out of service), failed, paused,
// stopped, interrupted. Every outcome lists Stranded: the servers left
// powered off, drained or with an image staged for the next boot, each with
// the command that brings it back; Status lists them too.
//
// Per server: observe (unreachable ⇒ failed(unreachable); every versioned
// step already satisfied ⇒ skipped(already_at_target) (24); fingerprint
// differs ⇒ failed(drift) with the component differences, not touched
// (26)); then the plan's steps. Drain runs the drain hook bounded by the
// step's or cluster's drain timeout (default 20m); on timeout the upgrade
// proceeds, on a non-zero exit the server fails untouched. Shutdown passes
// shutdown_timeout (default 10m) to the provider, which forces off after
// it (21). A failed uncordon is a warning on a completed server. A failed
// wait_ready starts remediation (30): the role's actions from
// Settings.Remediation (default control plane: reboot; management: reboot,
// reimage; compute: reimage), each followed by wait_ready; then compute is
// powered off and the server is failed(unhealthy) "needs a replace".
//
// # Journal
//
// One journal per plan SHA in the backend: append-only JSON lines, each
// durable before the action it announces. Replaying it rebuilds the state;
// the live engine writes a record and then applies it through the same
// code, so they cannot disagree. Record schema (version "v": 1):
//
//	{"v":1,"time":RFC3339,"type":T, ...}
//	run_started   plan_sha256, pid, by, message?  an apply began (lifts a stop);
//	                                            message: it took over a stale lock
//	run_ended     outcome, message               an apply ended
//	state         id, state, reason?, message?, until?   any node's state change
//	observed      server, fingerprint            pre-flight check passed
//	step_started  server, op, kind[, by]         written before Apply/hook is called;
//	              [retry, message]               by: the worker, with several (Claimer);
//	                                             retry: the n-th time an update that did
//	                                             not take effect is sent again (nottaken.go)
//	task_uri      server, op, task_uri           written as soon as Progress carries it
//	step_done     server, op, message?           task_state "Gone": its BMC task vanished
//	              [task_state]                   (a staged update: wait_ready reads it back);
//	                                             "None": accepted with no task to follow
//	                                             (wait_ready reads it back)
//	step_failed   server, op, error
//	retry_staged  server, op, steps, message     the plan's wait_ready (op) found updates
//	                                             staged for the reset that a BMC restart
//	                                             lost (steps): op ends, they are sent again
//	                                             with the host reset again (restage.go)
//	continue      by
//	approve       target (gate id), by
//	stop          by
//	skip          target (node id), by
//	available     id (cluster), message          a continue found the cluster's
//	                                             pending release at its site
//
// op is "step:<plan step index>", "remedy:<k>:<reboot|reimage|wait_ready>",
// "safety:<power_on|wait_ready|uncordon>", "restage:<shutdown|reset>" (a
// retry of lost staged updates) or "power_off". Node ids are the plan's ids (stage, gate, group, cluster,
// phase, scope), server addresses, "<scope>.wait", "<scope>.pause",
// "<stage>.wait" and "run". A continue or approval counts against pauses
// recorded before it (by journal position).
//
// Resume: an op with step_started and no step_done/step_failed was in
// flight. With a task_uri it is resumed by polling provider.Task
// (Completed ⇒ done; Exception/Killed ⇒ failed; Gone ⇒ verified by
// observing, staged updates trusted to wait_ready). Without one, a
// versioned step (update, reimage) is first verified by observing and only
// run again if the component is not at its version; other steps are
// idempotent and run again. An update or reimage run again this way (the
// kill may have come after the BMC accepted it: an OnReset flash is not
// visible until the reset) carries providers.Step.ResumeSince, the time of
// the op's first step_started of that unfinished stretch, so the provider
// attaches to the task the earlier attempt started instead of starting
// another (the redfish provider finds it in TaskService/Tasks). A completed step is never run twice. A torn
// last line is ignored when reading and cut off by the next append; a
// corrupt line elsewhere is an error naming its position.
//
// # Events
//
// Event is one JSON line (encoding/json), version "v": 1, with "time" and
// "type" plus the fields that type uses: id, kind, parent, state, reason,
// message, until, counts (scope numbers on scope and server events),
// server, op, step_kind, component, task_uri, percent, plan_sha256, target,
// by, outcome. Types:
//
//	apply_started apply_resumed apply_interrupting apply_ended(outcome)
//	<kind>_<verb>  kind: run stage gate wait group cluster phase scope server;
//	               verb: started resumed pending paused stopping stopped
//	               skipped failed completed; running (still running, with a
//	               new message: a server whose quorum check waits, and no longer)
//	rack_pause rack_pause_released   pause_after_rack
//	breach                           a scope breached (before its paused/failed event)
//	server_observed
//	quorum_wait                      a control-plane member's pre-flight quorum
//	                                 check has waited 30 s for a peer to answer
//	                                 (server, target: the peer, since)
//	step_started step_task step_progress step_completed step_failed step_resumed
//	step_retry                       the plan's wait_ready found staged updates a
//	                                 BMC restart lost: they are sent again and the
//	                                 host reset again (op, message: why)
//	step_interrupted                 given up at an interrupt, or its provider died;
//	                                 resumed from the journal, not failed
//	step_stalled                     a BMC task's percent has not moved for 10
//	                                 minutes (task_uri, percent, since)
//	continue_requested gate_approved stop_requested skip_requested
//	release_available                a continue found a pending cluster's
//	                                 release at its site (target, message)
//	worker_joined group_claimed server_held   several workers on one run (Claimer)
//
// testdata/events.golden.jsonl and testdata/journal.golden.jsonl show a
// complete stream. These are the executor's own: messages name actions by
// reference and "next" holds each action's text ("continue"); the CLI's
// `apply -json` stream (docs/json.md) writes them as command lines.
//
// # Backends
//
// Backend is small and byte-oriented (plans by SHA, journal append/read
// with positions, a lock row) so PostgreSQL can implement it later with
// the same records. executor/state has the local directory backend and an
// in-memory one; executor/executortest has fakes for tests;
// executor/postgres is the PostgreSQL backend, and the one Claimer: several
// applies drive one run, each the rollout groups it claimed (workers.go).
package executor
