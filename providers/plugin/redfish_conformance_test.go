package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
	"github.com/rackform/rackform/providers/redfish"
	"github.com/rackform/rackform/providers/sim"
)

const (
	simUser     = "admin"
	simPassword = "conformance-pw-81"
	// simSpeed makes a simulated 10-minute flash take 10 ms.
	simSpeed = 60000
)

// startBuiltin starts the built-in Redfish provider out of process the way
// rackform does (re-executing its own binary, here the test binary), over
// go-plugin with AutoMTLS.
func startBuiltin(t *testing.T, logs *syncBuffer) *Client {
	t.Helper()
	spec, err := BuiltinSpec(redfish.Name)
	if err != nil {
		t.Fatal(err)
	}
	spec.Argv0 = "rackform" // as testscript names the binary; TestMain dispatches on it
	logger := hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Debug, Output: logs})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, spec, logger)
	if err != nil {
		t.Fatalf("starting the redfish plugin: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRedfishPluginConformance runs the conformance suite against the
// built-in Redfish provider through the real out-of-process plugin, once per
// hardware profile of the simulator, each run updating that profile's server.
func TestRedfishPluginConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes and a simulated fleet")
	}
	// Images are served on loopback: push-only BMCs (openbmc) need the
	// provider to fetch the image and stream it to the BMC.
	image := bytes.Repeat([]byte{0x5A}, 64<<10)
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// The provider streams a push with the image's Content-Length.
		w.Header().Set("Content-Length", strconv.Itoa(len(image)))
		w.Write(image)
	}))
	t.Cleanup(images.Close)

	for _, profile := range sim.Profiles() {
		t.Run(profile, func(t *testing.T) {
			runRedfishConformance(t, profile, images.URL)
		})
	}
}

func runRedfishConformance(t *testing.T, profile, imageBase string) {
	var specs []sim.BMCSpec
	// The server under update comes first; a second server of another
	// profile checks that its fingerprint does not move.
	for _, p := range []string{profile, sim.ProfileDMTF} {
		specs = append(specs, sim.BMCSpec{Name: "c-" + p, Addr: "127.0.0.1:0", Profile: p, PowerOn: true,
			Firmware: map[string]string{"BIOS": "1.0", "BMC": "5.0"}})
	}
	if profile == sim.ProfileDMTF {
		specs = specs[:1]
	}
	fleet, err := sim.New(sim.Options{Speed: simSpeed, Username: simUser, Password: simPassword, TLS: true}, specs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := fleet.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		closeFleet(t, fleet)
	})

	bios := func(v string) providers.Expectation {
		return providers.Expectation{Component: "BIOS", Match: providers.Match{SoftwareID: "BIOS"}, Target: version.Target{Version: v}}
	}
	bmc := providers.Expectation{Component: "BMC", Match: providers.Match{SoftwareID: "BMC"}, Target: version.Target{Version: "5.0"}}
	var servers []providertest.Server
	for i, b := range fleet.BMCs() {
		target := providers.Target{Name: "east-1/r01/" + b.Name, Endpoint: b.URL, Updates: []providers.UpdateIntent{
			// Plans cross the wire: one answer per intent comes back.
			{Component: "BIOS", Match: providers.Match{SoftwareID: "BIOS"}, ImageURI: imageBase + "/images/bios-2.0.bin"},
		}}
		if i == 1 {
			// A server's own credentials travel with its target.
			target.Credentials = &providers.Credentials{Username: simUser, Password: simPassword}
		}
		servers = append(servers, providertest.Server{Target: target, Versions: []providers.Expectation{bios("1.0"), bmc}})
	}
	// An address that was free a moment ago: nothing answers there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()

	cfg, _ := json.Marshal(map[string]any{
		"username": simUser, "password": simPassword, "ca_bundle": string(fleet.CACertPEM()),
		"poll_interval": "5ms", "retry_base_delay": "2ms", "retry_max_delay": "20ms", "retry_max_attempts": 4, "timeout": "2s",
	})
	logs := &syncBuffer{}
	providertest.Run(t, providertest.Fixture{
		Name:          redfish.Name,
		New:           func(t *testing.T) providers.Provider { return startBuiltin(t, logs) },
		Config:        cfg,
		InvalidConfig: json.RawMessage(`{"concurrency": -1, "insecure": "maybe", "password": "` + simPassword + `"}`),
		Servers:       servers,
		Unreachable:   providers.Target{Name: "east-1/r01/gone", Endpoint: "https://" + dead},
		WrongCredentials: providers.Target{Name: "east-1/r01/wrong", Endpoint: fleet.BMCs()[0].URL,
			Credentials: &providers.Credentials{Username: simUser, Password: "wrong-" + simPassword}},
		Update: providertest.Update{
			Server: 0,
			Steps: []providers.Step{
				{Kind: providers.StepUpdate, Component: "BIOS", Match: providers.Match{SoftwareID: "BIOS"}, Target: version.Target{Version: "2.0"},
					ImageURI: imageBase + "/images/bios-2.0.bin", ApplyTime: "OnReset"},
				{Kind: providers.StepReset, ResetType: "ForceRestart"},
				{Kind: providers.StepWaitReady, Timeout: 10 * time.Second, Expect: []providers.Expectation{bios("2.0")}},
			},
			After: bios("2.0"),
		},
		Secrets: []string{simPassword, "wrong-" + simPassword},
		Timeout: 30 * time.Second,
	})

	// The suite ended with Stop: the plugin must have deleted its sessions.
	for _, sp := range specs {
		if st := fleet.Stats(sp.Name); st.SessionsOpen != 0 || st.SessionsCreated == 0 {
			t.Errorf("%s: %d sessions created, %d still open after Stop; want some, and none open", sp.Name, st.SessionsCreated, st.SessionsOpen)
		}
	}
	if got := fleet.Stats(specs[0].Name).Flashes["BIOS"]; got != 1 {
		t.Errorf("%s flashed BIOS %d times, want once", specs[0].Name, got)
	}
	if bytes.Contains([]byte(logs.String()), []byte(simPassword)) {
		t.Errorf("the password reached the host log")
	}
}

// TestRedfishPluginCloseDeletesSessions closes the plugin without an
// explicit Stop, as a host does when it exits: the BMC sessions the provider
// opened must still be deleted.
func TestRedfishPluginCloseDeletesSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a plugin process and a simulated fleet")
	}
	specs := []sim.BMCSpec{{Name: "c01", Addr: "127.0.0.1:0", PowerOn: true}, {Name: "c02", Addr: "127.0.0.1:0", Profile: sim.ProfileILO5, PowerOn: true}}
	fleet, err := sim.New(sim.Options{Speed: simSpeed, Username: simUser, Password: simPassword, TLS: true}, specs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer closeFleet(t, fleet)
	var targets []providers.Target
	for _, b := range fleet.BMCs() {
		targets = append(targets, providers.Target{Name: b.Name, Endpoint: b.URL})
	}
	c := startBuiltin(t, &syncBuffer{})
	cfg, _ := json.Marshal(map[string]any{"username": simUser, "password": simPassword, "ca_bundle": string(fleet.CACertPEM())})
	if d := c.Configure(ctx, &providers.ConfigureRequest{Config: cfg}); d.HasErrors() {
		t.Fatal(d.Err())
	}
	d := c.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		if !o.Reachable {
			t.Errorf("%s unreachable: %v", o.Server, o.Diagnostics.Err())
		}
		return nil
	})
	if d.HasErrors() {
		t.Fatal(d.Err())
	}
	// Each server's observation logs out right away: nothing is left open
	// even before Close.
	open, created := 0, 0
	for _, sp := range specs {
		open += fleet.Stats(sp.Name).SessionsOpen
		created += fleet.Stats(sp.Name).SessionsCreated
	}
	if created == 0 {
		t.Fatal("the provider opened no sessions: nothing to check")
	}
	if open != 0 {
		t.Errorf("%d sessions open after Observe returned, want 0 (each logged out after its server's reads)", open)
	}
	c.Close()
	if !c.Exited() {
		t.Error("the plugin process still runs after Close")
	}
	for _, sp := range specs {
		if st := fleet.Stats(sp.Name); st.SessionsOpen != 0 {
			t.Errorf("%s: %d sessions still open after Close", sp.Name, st.SessionsOpen)
		}
	}
}

// closeFleet closes a simulated fleet, turning a Close that hangs into a
// failure with every goroutine's stack rather than a silent test timeout.
func closeFleet(t *testing.T, fleet *sim.Fleet) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		fleet.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		var stacks strings.Builder
		pprof.Lookup("goroutine").WriteTo(&stacks, 2)
		t.Errorf("sim: fleet.Close did not return within 30s; goroutines:\n%s", stacks.String())
	}
}
