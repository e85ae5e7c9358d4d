package run

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// CABundleAttr is the provider attribute naming the CAs that verify BMC
// certificates (the redfish provider's ca_bundle): PEM text, or the path
// of a PEM file, which the plugin used to read for itself.
const CABundleAttr = "ca_bundle"

// CABundle is a provider's CA bundle, read once.
type CABundle struct {
	// Attrs are the provider's attributes with the bundle's PEM text in
	// place of its path: the plugin is given exactly the bytes hashed.
	Attrs cty.Value
	// SHA256 is the hex SHA-256 of the PEM bytes; "" when the provider
	// has no bundle.
	SHA256 string
	// Path is the file as the configuration named it; "" when the PEM
	// was given inline or the attribute is sensitive.
	Path string
}

// PinCABundle reads the CA bundle of the provider block decl, when it has
// one: a path is read here (a regular file, relative to the working
// directory as the plugin would have read it) and replaced by its text.
func PinCABundle(decl *config.Provider) (CABundle, error) {
	out := CABundle{Attrs: decl.Attrs}
	attrs := decl.Attrs
	if attrs.IsNull() || !attrs.IsKnown() || !attrs.Type().IsObjectType() || !attrs.Type().HasAttribute(CABundleAttr) {
		return out, nil
	}
	v := attrs.GetAttr(CABundleAttr)
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String || v.AsString() == "" {
		return out, nil
	}
	s := v.AsString()
	pem := []byte(s)
	if !strings.Contains(s, "-----BEGIN") {
		sensitive := decl.IsSensitive(CABundleAttr)
		fail := func(err error) (CABundle, error) {
			if sensitive {
				// The path came from a sensitive value: never print it.
				return out, fmt.Errorf("cannot read the CA bundle its sensitive %s names", CABundleAttr)
			}
			return out, fmt.Errorf("cannot read the CA bundle (%s): %w", CABundleAttr, err)
		}
		var err error
		if pem, err = regularfile.Read(s, regularfile.CABundle); err != nil {
			return fail(err)
		}
		if !sensitive {
			out.Path = s
		}
	}
	sum := sha256.Sum256(pem)
	out.SHA256 = hex.EncodeToString(sum[:])
	m := attrs.AsValueMap()
	m[CABundleAttr] = cty.StringVal(string(pem))
	out.Attrs = cty.ObjectVal(m)
	return out, nil
}

// checkCABundles pins the CA bundle of every provider of cfg the plan
// names and refuses one whose bytes are not those the plan was made with
// (format 1.5; earlier plans record none). The provider blocks of cfg (the
// plan's snapshot, in memory) then hold the PEM text itself, so the
// plugins trust exactly what was checked.
func checkCABundles(p *plan.Plan, cfg *config.Config) error {
	if !plan.FormatAtLeast(p.FormatVersion, 1, 5) {
		return nil
	}
	for _, pp := range p.Providers {
		decl := cfg.Provider(pp.Name)
		if decl == nil {
			continue
		}
		ca, err := PinCABundle(decl)
		if err != nil {
			return fmt.Errorf("provider %q: %w", pp.Name, err)
		}
		if ca.SHA256 != pp.CABundleSHA256 {
			return caMismatch(pp, ca)
		}
		decl.Attrs = ca.Attrs
	}
	return nil
}

func caMismatch(pp plan.Provider, ca CABundle) error {
	what := "the CA bundle"
	if ca.Path != "" {
		what += " " + ca.Path
	}
	switch {
	case pp.CABundleSHA256 == "":
		return fmt.Errorf("provider %q: %s (%s) has SHA-256 %s, but the plan was made without a CA bundle: apply trusts only the CAs that were reviewed; plan again", pp.Name, what, CABundleAttr, plan.ShortSHA(ca.SHA256))
	case ca.SHA256 == "":
		return fmt.Errorf("provider %q: the plan was made trusting the CA bundle %s (SHA-256 %s), and the provider has none now: plan again", pp.Name, pp.CABundle, plan.ShortSHA(pp.CABundleSHA256))
	}
	return fmt.Errorf("provider %q: %s (%s) has SHA-256 %s, but the plan was made trusting the bundle with SHA-256 %s: the CAs that verify the BMCs' certificates changed after review; restore the reviewed file, or plan again", pp.Name, what, CABundleAttr, plan.ShortSHA(ca.SHA256), plan.ShortSHA(pp.CABundleSHA256))
}
