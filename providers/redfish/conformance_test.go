package redfish

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
	"github.com/rackform/rackform/providers/sim"
)

// TestConformance runs the provider contract's suite against the simulator,
// one server per hardware profile.
func TestConformance(t *testing.T) {
	var specs []sim.BMCSpec
	for _, p := range sim.Profiles() {
		specs = append(specs, sim.BMCSpec{Name: "c-" + p, Addr: "127.0.0.1:0", Profile: p, PowerOn: true,
			Firmware: map[string]string{"BIOS": "1.0", "BMC": "5.0"}})
	}
	f, err := sim.New(sim.Options{Speed: simSpeed, Username: testUser, Password: testPassword, TLS: true}, specs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); f.Close() })

	var servers []providertest.Server
	for _, b := range f.BMCs() {
		servers = append(servers, providertest.Server{
			Target: providers.Target{Name: b.Name, Endpoint: b.URL, Updates: []providers.UpdateIntent{
				{Component: "BIOS", Match: providers.Match{SoftwareID: "BIOS"}, ImageURI: "https://127.0.0.1:9/images/bios-2.0.bin"},
				{Component: "BMC", Match: providers.Match{SoftwareID: "BMC"}, ImageURI: "https://127.0.0.1:9/images/bmc-6.0.bin"},
			}},
			Versions: []providers.Expectation{expect("BIOS", "1.0"), expect("BMC", "5.0")},
		})
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()

	attrs := map[string]any{"username": testUser, "password": testPassword, "ca_bundle": string(f.CACertPEM())}
	for k, v := range fastAttrs {
		attrs[k] = v
	}
	cfg, _ := json.Marshal(attrs)
	providertest.Run(t, providertest.Fixture{
		Name: Name,
		New: func(t *testing.T) providers.Provider {
			p := New(Options{})
			t.Cleanup(func() { p.Stop(context.Background()) })
			return p
		},
		Config:        cfg,
		InvalidConfig: json.RawMessage(`{"concurrency": -1, "insecure": "maybe"}`),
		Servers:       servers,
		Unreachable:   providers.Target{Name: "gone", Endpoint: "https://" + dead},
		WrongCredentials: providers.Target{Name: "wrong-password", Endpoint: f.BMCs()[0].URL,
			Credentials: &providers.Credentials{Username: testUser, Password: "not-" + testPassword}},
		Update: providertest.Update{
			Server: 0,
			Steps: []providers.Step{
				{Kind: providers.StepUpdate, Component: "BIOS", Match: providers.Match{SoftwareID: "BIOS"}, Target: version.Target{Version: "2.0"},
					ImageURI: "http://127.0.0.1:9/images/bios-2.0.bin", ApplyTime: "OnReset"},
				{Kind: providers.StepReset, ResetType: "ForceRestart"},
				{Kind: providers.StepWaitReady, Timeout: 10 * time.Second, Expect: []providers.Expectation{expect("BIOS", "2.0")}},
			},
			After: expect("BIOS", "2.0"),
		},
		Secrets: []string{testPassword, "not-" + testPassword},
		Timeout: 30 * time.Second,
	})
}
