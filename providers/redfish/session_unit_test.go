package redfish

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// TestObserveInterruptedLeavesNoSession: a plan interrupted while servers
// are being read (SIGINT cancels Observe's context) still deletes every
// session it made before Observe returns, without waiting for Stop: each
// server's observation logs out even when its context ended.
func TestObserveInterruptedLeavesNoSession(t *testing.T) {
	var (
		once   sync.Once
		cancel context.CancelFunc
		ctx    context.Context
	)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var specs []sim.BMCSpec
	for i := range 8 {
		specs = append(specs, sim.BMCSpec{Name: fmt.Sprintf("b%d", i), Profile: sim.ProfileDMTF, PowerOn: true})
	}
	// The interruption comes once sessions exist: at the first read made
	// with a session, anywhere in the fleet.
	opts := sim.Options{Latency: 20 * time.Millisecond, OnRequest: func(_ string, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("X-Auth-Token") != "" {
			once.Do(cancel)
		}
	}}
	env := startSim(t, opts, specs, nil, Options{})
	var targets []providers.Target
	for _, tg := range env.targets {
		targets = append(targets, tg)
	}
	d := env.p.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(*providers.Observation) error { return nil })
	if !d.HasErrors() {
		t.Fatal("Observe was not interrupted")
	}
	created, open := 0, 0
	for _, s := range specs {
		st := env.fleet.Stats(s.Name)
		created += st.SessionsCreated
		open += st.SessionsOpen
	}
	if created == 0 {
		t.Fatal("no session was made before the interruption: nothing checked")
	}
	if open != 0 {
		t.Errorf("%d of %d sessions still open after the interrupted Observe returned, want 0", open, created)
	}
}

// TestObserveLogsOutEachServer: after a plan's Observe, no session is left
// open on any BMC, each server made exactly one login, and each BMC was
// reached over one TLS connection.
func TestObserveLogsOutEachServer(t *testing.T) {
	var specs []sim.BMCSpec
	for i := range 6 {
		specs = append(specs, sim.BMCSpec{Name: fmt.Sprintf("b%d", i), Profile: sim.Profiles()[i%len(sim.Profiles())], PowerOn: true})
	}
	env := startSim(t, sim.Options{}, specs, nil, Options{})
	var targets []providers.Target
	for _, tg := range env.targets {
		targets = append(targets, tg)
	}
	for _, o := range observeAll(t, env.p, targets...) {
		if o.Outcome != providers.OutcomeObserved {
			t.Errorf("%s: %s %v", o.Server, o.Outcome, o.Diagnostics.Err())
		}
	}
	for _, s := range specs {
		st := env.fleet.Stats(s.Name)
		if st.SessionsOpen != 0 || st.SessionsCreated != 1 {
			t.Errorf("%s: %d sessions created, %d open; want 1 made and deleted", s.Name, st.SessionsCreated, st.SessionsOpen)
		}
		if st.Connections != 1 {
			t.Errorf("%s: %d connections (TLS handshakes), want 1", s.Name, st.Connections)
		}
	}
}

// closeFails is a bmc whose logout fails the first fails times.
type closeFails struct {
	bmc
	fails, calls int
}

func (c *closeFails) Close(ctx context.Context) error {
	c.calls++
	if _, ok := ctx.Deadline(); !ok {
		return fmt.Errorf("logout without a deadline")
	}
	if c.calls <= c.fails {
		return fmt.Errorf("HTTP 503 Service Unavailable")
	}
	return nil
}

// TestLogoutRetriedOnceThenReported: a logout that fails is tried once
// more, even when the caller's context has ended (an interrupted plan),
// and one that fails twice is reported in words naming the BMC, never
// left silently.
func TestLogoutRetriedOnceThenReported(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	once := &closeFails{fails: 1}
	if err := logout(done, once); err != nil || once.calls != 2 {
		t.Errorf("one failed logout: %v after %d tries; want it retried once and done", err, once.calls)
	}
	twice := &closeFails{fails: 2}
	err := logout(done, twice)
	if err == nil || twice.calls != 2 {
		t.Fatalf("two failed logouts: %v after %d tries; want an error after 2", err, twice.calls)
	}
	p := New(Options{})
	d := p.logoutFailed("https://10.0.0.9", err)
	if d.Severity != providers.Warning || !strings.Contains(d.Detail, "https://10.0.0.9") || !strings.Contains(d.Detail, "tried twice") {
		t.Errorf("report: %+v", d)
	}
}
