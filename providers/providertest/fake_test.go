package providertest_test

import (
	"encoding/json"
	"testing"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// FakeFixture is the conformance fixture for providertest.Fake; the plugin
// tests reuse it through the protocol.
func fakeFixture(newProvider func(t *testing.T, f *providertest.Fake) providers.Provider) providertest.Fixture {
	bios := providers.Match{ID: "BIOS"}
	servers := []providertest.FakeServer{
		{Endpoint: "https://127.1.0.1:8443", Components: []providers.Component{
			{ID: "BMC", Name: "BMC Firmware", SoftwareID: "bmc", Version: "1.10", Updateable: true},
			{ID: "BIOS", Name: "System ROM", SoftwareID: "bios", Version: "2.0.1", Updateable: true},
		}},
		{Endpoint: "https://127.1.0.2:8443", Components: []providers.Component{
			{ID: "BMC", Name: "BMC Firmware", SoftwareID: "bmc", Version: "1.10", Updateable: true},
			{ID: "BIOS", Name: "System ROM", SoftwareID: "bios", Version: "2.0.1", Updateable: true},
		}},
	}
	return providertest.Fixture{
		Name: "fake",
		New: func(t *testing.T) providers.Provider {
			return newProvider(t, providertest.NewFake(servers...))
		},
		Config:        json.RawMessage(`{"username":"admin","password":"s3cret-pw"}`),
		InvalidConfig: json.RawMessage(`{"user":"admin","password":"s3cret-pw"}`),
		Servers: []providertest.Server{
			{Target: providers.Target{Name: "r01-c01", Endpoint: "https://127.1.0.1:8443"},
				Versions: []providers.Expectation{{Component: "bios", Match: bios, Version: "2.0.1"}}},
			{Target: providers.Target{Name: "r01-c02", Endpoint: "https://127.1.0.2:8443",
				Credentials: &providers.Credentials{Username: "root", Password: "target-pw"}},
				Versions: []providers.Expectation{{Component: "bmc", Match: providers.Match{SoftwareID: "bmc"}, Version: "1.10"}}},
		},
		Unreachable: providers.Target{Name: "r01-c03", Endpoint: "https://127.1.0.3:8443"},
		Update: providertest.Update{
			Server: 0,
			Steps: []providers.Step{
				{Kind: providers.StepUpdate, Component: "bios", Match: bios, Version: "2.1.0", ImageURI: "http://127.0.0.1/bios.bin", ApplyTime: "OnReset"},
				{Kind: providers.StepReset, ResetType: "GracefulRestart"},
				{Kind: providers.StepWaitReady, Expect: []providers.Expectation{{Component: "bios", Match: bios, Version: "2.1.0"}}},
			},
			After: providers.Expectation{Component: "bios", Match: bios, Version: "2.1.0"},
		},
		Secrets: []string{"s3cret-pw", "target-pw"},
	}
}

func TestFakeConformance(t *testing.T) {
	providertest.Run(t, fakeFixture(func(_ *testing.T, f *providertest.Fake) providers.Provider { return f }))
}
