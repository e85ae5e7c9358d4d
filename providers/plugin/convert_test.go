package plugin

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
	pb "github.com/rackform/rackform/providers/plugin/proto/providerv1"
)

// TestDiagsFromProtoSeverity pins the mapping of severities from the wire,
// including ones this host does not know: they must count as errors, so a
// newer plugin's failure never looks harmless.
func TestDiagsFromProtoSeverity(t *testing.T) {
	in := []*pb.Diagnostic{
		{Severity: pb.Severity_SEVERITY_ERROR, Summary: "e"},
		{Severity: pb.Severity_SEVERITY_WARNING, Summary: "w"},
		{Severity: pb.Severity_SEVERITY_UNSPECIFIED, Summary: "u"},
		{Severity: pb.Severity(42), Summary: "future"},
	}
	want := providers.Diagnostics{
		{Severity: providers.Error, Summary: "e"},
		{Severity: providers.Warning, Summary: "w"},
		{Severity: providers.Error, Summary: "u"},
		{Severity: providers.Error, Summary: "future"},
	}
	if diff := cmp.Diff(want, diagsFromProto(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diagsFromProto(nil) != nil || diagsToProto(nil) != nil {
		t.Error("no diagnostics must stay nil both ways")
	}
}

// TestCredentialsString keeps the contract's promise for the host's own
// formatting: credentials print without the password.
func TestCredentialsString(t *testing.T) {
	c := providers.Credentials{Username: "root", Password: "hunter2"}
	tg := targetFromProto(targetToProto(providers.Target{Name: "a", Credentials: &c}))
	for _, s := range []string{tg.Credentials.String(), fmt.Sprintf("%v", *tg.Credentials), fmt.Sprintf("%#v", *tg.Credentials)} {
		if s != "Credentials{root, ***}" {
			t.Errorf("credentials print as %q", s)
		}
	}
}
