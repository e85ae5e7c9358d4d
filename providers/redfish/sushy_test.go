package redfish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// TestPushRefusalNamesTheURI: a BMC that advertises an HttpPushUri where
// nothing is served (sushy-tools' emulator advertises its
// FirmwareInventory URI, which answers 404) refuses the push; the error
// names the URI the image was pushed to, so the 404 says what was not
// found.
func TestPushRefusalNamesTheURI(t *testing.T) {
	env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "s1", Profile: sim.ProfileSushy, PowerOn: true}}, nil, Options{})
	img := filepath.Join(t.TempDir(), "bios-1.1.0.bin")
	if err := os.WriteFile(img, []byte(strings.Repeat("firmware\n", 64)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, d, _ := env.apply(t, "s1", providers.Step{Kind: providers.StepUpdate, Component: "bios", ImageURI: img, Target: version.Target{Version: "1.1.0"}, Method: providers.MethodHTTPPush})
	err := d.Err()
	if err == nil {
		t.Fatal("a push to a URI that answers 404 succeeded")
	}
	for _, want := range []string{"HttpPushUri /redfish/v1/UpdateService/FirmwareInventory", "HTTP 404"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
