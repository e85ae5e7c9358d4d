package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

const testPEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// A CA bundle path is read once and replaced by its text, so the plugin
// trusts exactly the bytes hashed; apply refuses a bundle whose hash is
// not the plan's, and checks nothing for plans before format 1.5.
func TestCABundlePinned(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("ca.pem", []byte(testPEM), 0o644); err != nil {
		t.Fatal(err)
	}
	decl := func(v string) *config.Provider {
		return &config.Provider{Name: "redfish", Attrs: cty.ObjectVal(map[string]cty.Value{
			"username": cty.StringVal("admin"), CABundleAttr: cty.StringVal(v)})}
	}
	ca, err := PinCABundle(decl("ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if ca.Path != "ca.pem" || ca.SHA256 != plan.SHA256([]byte(testPEM)) || ca.Attrs.GetAttr(CABundleAttr).AsString() != testPEM {
		t.Fatalf("pinned %+v", ca)
	}
	inline, err := PinCABundle(decl(testPEM))
	if err != nil || inline.Path != "" || inline.SHA256 != ca.SHA256 {
		t.Fatalf("inline PEM: %+v, %v", inline, err)
	}
	secret := decl("ca.pem")
	secret.SensitiveAttrs = []string{CABundleAttr}
	if s, err := PinCABundle(secret); err != nil || s.Path != "" || s.SHA256 != ca.SHA256 {
		t.Fatalf("sensitive path: %+v, %v (its path must not be recorded)", s, err)
	}
	if _, err := PinCABundle(decl("missing.pem")); err == nil || !strings.Contains(err.Error(), "cannot read the CA bundle (ca_bundle): open missing.pem") {
		t.Fatalf("a missing bundle: %v", err)
	}
	secretMissing := decl("secret-dir/missing.pem")
	secretMissing.SensitiveAttrs = []string{CABundleAttr}
	if _, err := PinCABundle(secretMissing); err == nil || strings.Contains(err.Error(), "secret-dir") {
		t.Fatalf("a missing bundle named by a sensitive value: %v (its path must not be printed)", err)
	}

	p := &plan.Plan{FormatVersion: "1.5", Providers: []plan.Provider{{Name: "redfish", CABundleSHA256: ca.SHA256, CABundle: "ca.pem"}}}
	cfg := func() *config.Config { return &config.Config{Providers: []*config.Provider{decl("ca.pem")}} }
	c := cfg()
	if err := checkCABundles(p, c); err != nil {
		t.Fatal(err)
	}
	if got := c.Provider("redfish").Attrs.GetAttr(CABundleAttr).AsString(); got != testPEM {
		t.Errorf("the provider is configured with %q, not the bytes checked", got)
	}
	if err := os.WriteFile(filepath.Join(".", "ca.pem"), []byte(strings.Replace(testPEM, "MIIB", "MIIC", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkCABundles(p, cfg())
	if err == nil || !strings.Contains(err.Error(), `provider "redfish": the CA bundle ca.pem (ca_bundle) has SHA-256 `) || !strings.Contains(err.Error(), "but the plan was made trusting the bundle with SHA-256 "+ca.SHA256[:12]) {
		t.Fatalf("a replaced bundle: %v", err)
	}
	p.FormatVersion = "1.4"
	if err := checkCABundles(p, cfg()); err != nil {
		t.Errorf("a 1.4 plan records no bundle, so none is checked: %v", err)
	}
}
