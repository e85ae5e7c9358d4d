package redfish

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

var errCrash = errors.New("crash (test)")

// crashAt runs step and ends the call as a crash would when a progress
// report satisfies at: the BMC may have accepted the work, the caller never
// learned of it.
func (e *simEnv) crashAt(t *testing.T, name string, step providers.Step, at func(*providers.Progress) bool) {
	t.Helper()
	_, d := e.p.Apply(context.Background(), &providers.ApplyRequest{Target: e.targets[name], Step: step}, func(p *providers.Progress) error {
		if at(p) {
			return errCrash
		}
		return nil
	})
	if !d.HasErrors() {
		t.Fatalf("%s: the crash did not happen", step.Kind)
	}
}

// TestResumeAttachesToAcceptedUpdate: an update the BMC accepted before the
// caller crashed (the 202 was lost) is found again in TaskService/Tasks
// when the step is resumed with ResumeSince, on every profile and by
// SimpleUpdate and multipart push: no second update is started, and the
// resumed step reports the found task's URI. A fresh start (no
// ResumeSince) or a task older than ResumeSince less the clock skew is not
// attached to.
func TestResumeAttachesToAcceptedUpdate(t *testing.T) {
	images := imageServer(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "nic-22.1.bin")
	if err := os.WriteFile(local, bytes.Repeat([]byte{0xA5}, 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	type method struct {
		name, method, image string
	}
	for _, profile := range sim.Profiles() {
		methods := []method{}
		if profile != sim.ProfileOpenBMC {
			methods = append(methods, method{"simple_update", MethodSimpleUpdate, images.URL + "/images/bios-2.80.bin"})
		}
		if profile != sim.ProfileAMI {
			methods = append(methods, method{"push", MethodPush, local})
		}
		for _, m := range methods {
			t.Run(profile+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "c01", Profile: profile, PowerOn: true,
					Firmware: map[string]string{"BIOS": "1.10", "NIC": "21.0"}}}, nil, Options{})
				step := providers.Step{Kind: providers.StepUpdate, Component: "x", ImageURI: m.image, Method: m.method, ApplyTime: "OnReset"}
				began := time.Now()
				env.crashAt(t, "c01", step, func(p *providers.Progress) bool { return p.TaskURI != "" })
				if got := env.fleet.Stats("c01").Updates; got != 1 {
					t.Fatalf("updates accepted before the crash: %d, want 1", got)
				}

				// A task that started long before the earlier attempt is not it.
				stale := step
				stale.ResumeSince = began.Add(time.Hour)
				_, d, _ := env.apply(t, "c01", stale)
				if d.HasErrors() {
					t.Fatalf("resume with a later ResumeSince: %v", d.Err())
				}
				if got := env.fleet.Stats("c01").Updates; got != 2 {
					t.Fatalf("a task older than ResumeSince-skew was attached to: updates %d, want 2", got)
				}

				// Resumed: the earlier attempt's tasks are found, none started.
				resumed := step
				resumed.ResumeSince = began.Add(5 * time.Minute) // the BMC clock lags: within the skew
				res, d, prog := env.apply(t, "c01", resumed)
				if d.HasErrors() {
					t.Fatalf("resume: %v", d.Err())
				}
				if got := env.fleet.Stats("c01").Updates; got != 2 {
					t.Errorf("resumed update started another: updates %d, want 2", got)
				}
				if res == nil || res.TaskURI == "" || !strings.Contains(res.Message, "resumed") {
					t.Errorf("resume result %+v, want the found task and a resumed message", res)
				}
				if i := firstTaskReport(prog); i < 0 || prog[i].TaskURI != res.TaskURI {
					t.Errorf("the found task must be reported as progress (to be journaled): %+v", prog)
				}

				// A fresh start always starts an update.
				env.mustApply(t, "c01", step)
				if got := env.fleet.Stats("c01").Updates; got != 3 {
					t.Errorf("fresh start: updates %d, want 3", got)
				}
			})
		}
	}
}

// TestResumeReimageOnce: a reimage resumed after a crash that came after
// the media was inserted and the one-time boot set (but before the reset)
// resets once and does not insert again; the runtime is installed once.
func TestResumeReimageOnce(t *testing.T) {
	images := imageServer(t)
	for _, profile := range sim.Profiles() {
		t.Run(profile, func(t *testing.T) {
			t.Parallel()
			env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "c01", Profile: profile, PowerOn: true,
				Firmware: map[string]string{"Runtime": "4.5.0"}}}, nil, Options{})
			step := providers.Step{Kind: providers.StepReimage, ImageURI: images.URL + "/iso/runtime-4.6.1.iso"}
			began := time.Now()
			env.crashAt(t, "c01", step, func(p *providers.Progress) bool { return strings.HasPrefix(p.Message, "reset ") })
			if st := env.fleet.Stats("c01"); st.Resets != 0 {
				t.Fatalf("the crash came after the reset (%d)", st.Resets)
			}
			step.ResumeSince = began
			var inserts int
			_, d := env.p.Apply(context.Background(), &providers.ApplyRequest{Target: env.targets["c01"], Step: step}, func(p *providers.Progress) error {
				if strings.HasPrefix(p.Message, "insert ") || strings.HasPrefix(p.Message, "eject ") || strings.HasPrefix(p.Message, "boot once") {
					inserts++
				}
				return nil
			})
			if d.HasErrors() {
				t.Fatalf("resume: %v", d.Err())
			}
			if inserts != 0 {
				t.Errorf("the resumed reimage ejected, inserted or set the boot override again (%d times)", inserts)
			}
			env.mustApply(t, "c01", providers.Step{Kind: providers.StepWaitReady, Timeout: 5 * time.Second, Expect: []providers.Expectation{expect("Runtime", "4.6.1")}})
			if st := env.fleet.Stats("c01"); st.Resets != 1 || st.Reimages != 1 {
				t.Errorf("resets %d, reimages %d; want 1 and 1", st.Resets, st.Reimages)
			}
		})
	}
}

func TestMatchResumeTask(t *testing.T) {
	since := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	img := "http://images/bios-2.80.bin"
	tasks := []taskInfo{
		{URI: "/t/1", State: providers.TaskCompleted, Start: since.Add(-11 * time.Minute), Name: "Update bios-2.80.bin"},
		{URI: "/t/2", State: providers.TaskException, Start: since, Name: "Update bios-2.80.bin"},
		{URI: "/t/3", State: providers.TaskRunning, Start: since.Add(-9 * time.Minute), JSONBody: `{"ImageURI":"http://images/bios-2.80.bin"}`},
		{URI: "/t/4", State: providers.TaskRunning, Start: since.Add(time.Minute), JSONBody: `{"ImageURI":"http://images/nic-1.bin"}`, Name: "bios-2.80.bin"},
		{URI: "/t/5", State: providers.TaskRunning, Start: since.Add(time.Minute), Name: "Update bios-2.80.bin.sig"},
		{URI: "/t/6", State: providers.TaskRunning, Name: "Update bios-2.80.bin"},
	}
	if got := matchResumeTask(tasks, img, since); got == nil || got.URI != "/t/3" {
		t.Fatalf("matched %+v, want /t/3", got)
	}
	tasks = append(tasks, taskInfo{URI: "/t/7", State: providers.TaskNew, Start: since.Add(2 * time.Minute), Name: "Task 7", JSONBody: "x bios-2.80.bin"})
	if got := matchResumeTask(tasks, img, since); got == nil || got.URI != "/t/7" {
		t.Fatalf("matched %+v, want the newest, /t/7", got)
	}
	redacted := []taskInfo{{URI: "/t/8", State: providers.TaskRunning, Start: since, JSONBody: `{"ImageURI":"http://images/bios-2.80.bin"}`}}
	if got := matchResumeTask(redacted, "http://user:pw@images/bios-2.80.bin", since); got == nil {
		t.Error("a task whose ImageURI the BMC showed without user info is not matched")
	}
	if got := matchResumeTask(tasks[:2], img, since); got != nil {
		t.Fatalf("matched %+v, want none (too old; failed)", got)
	}
}

// TestResumeReimageWhileBooting: a reimage resumed after a crash that came
// after the reset (the host is booting the media, the one-time override
// consumed) does not reset again: the install in progress finishes once.
func TestResumeReimageWhileBooting(t *testing.T) {
	images := imageServer(t)
	// Slow enough that the host is still installing when the resume comes:
	// boot + install = 7 simulated minutes = 700 ms.
	env := startSim(t, sim.Options{Speed: 600}, []sim.BMCSpec{{Name: "c01", Profile: sim.ProfileDMTF, PowerOn: true,
		Firmware: map[string]string{"Runtime": "4.5.0"}}}, nil, Options{})
	step := providers.Step{Kind: providers.StepReimage, ImageURI: images.URL + "/iso/runtime-4.6.1.iso"}
	began := time.Now()
	env.mustApply(t, "c01", step) // the attempt whose step_done was never journaled
	if p, _ := env.fleet.PowerState("c01"); p != providers.PowerPoweringOn {
		t.Skipf("the host is %s already: too slow a machine for this timing", p)
	}
	step.ResumeSince = began
	res := env.mustApply(t, "c01", step)
	if !strings.Contains(res.Message, "already booting") {
		t.Errorf("resumed reimage: %q, want it to find the boot in progress", res.Message)
	}
	env.mustApply(t, "c01", providers.Step{Kind: providers.StepWaitReady, Timeout: 30 * time.Second, Expect: []providers.Expectation{expect("Runtime", "4.6.1")}})
	if st := env.fleet.Stats("c01"); st.Resets != 1 || st.Reimages != 1 {
		t.Errorf("resets %d, reimages %d; want 1 and 1", st.Resets, st.Reimages)
	}
}

// TestResumeReimageAfterInstall: a reimage resumed after a crash that came
// once the install had finished (the executor may have looked while the
// host was still booting; the boot ends before the provider looks) finds
// the media inserted, the host on and the runtime at the step's version,
// and does not install again.
func TestResumeReimageAfterInstall(t *testing.T) {
	images := imageServer(t)
	env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "c01", Profile: sim.ProfileDMTF, PowerOn: true,
		Firmware: map[string]string{"Runtime": "4.5.0"}}}, nil, Options{})
	step := providers.Step{Kind: providers.StepReimage, Component: "runtime", Match: providers.Match{ID: "Runtime"}, Target: version.Target{Version: "4.6.1"},
		ImageURI: images.URL + "/iso/runtime-4.6.1.iso"}
	began := time.Now()
	env.mustApply(t, "c01", step) // the attempt whose step_done was never journaled
	env.mustApply(t, "c01", providers.Step{Kind: providers.StepWaitReady, Timeout: 30 * time.Second, Expect: []providers.Expectation{expect("Runtime", "4.6.1")}})
	step.ResumeSince = began
	res := env.mustApply(t, "c01", step)
	if !strings.Contains(res.Message, "already booted") {
		t.Errorf("resumed reimage: %q, want it to find the install done", res.Message)
	}
	if st := env.fleet.Stats("c01"); st.Resets != 1 || st.Reimages != 1 {
		t.Errorf("resets %d, reimages %d; want 1 and 1", st.Resets, st.Reimages)
	}
	// Not resumed (a fresh start), the same step reinstalls.
	step.ResumeSince = time.Time{}
	env.mustApply(t, "c01", step)
	env.mustApply(t, "c01", providers.Step{Kind: providers.StepWaitReady, Timeout: 30 * time.Second, Expect: []providers.Expectation{expect("Runtime", "4.6.1")}})
	if st := env.fleet.Stats("c01"); st.Reimages != 2 {
		t.Errorf("a fresh reimage did not install: reimages %d, want 2", st.Reimages)
	}
}
