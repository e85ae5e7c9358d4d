package planview

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

// Format 1.6 records a server upgraded although Critical: every rendering
// shows it first, with its reason (rule 50): the text and markdown before
// what was not observed, held back or the tree, the headline, the HTML
// page before the racks (the cell outlined), show -json at the top and on
// the server, and the JSON stream's line for it at warn.
func TestGoldenFormat16(t *testing.T) {
	const reason = "INC-4711: the PSU fault is fixed by BMC 7.20"
	text, md := renderGoldenFormat(t, "1.6")
	first := func(what, doc, section string, laterThan ...string) {
		t.Helper()
		at := strings.Index(doc, section)
		if at < 0 {
			t.Fatalf("%s lacks %q:\n%s", what, section, doc)
		}
		for _, l := range laterThan {
			if i := strings.Index(doc, l); i >= 0 && i < at {
				t.Errorf("%s shows %q before %q", what, l, section)
			}
		}
	}
	first("text", text.String(), "Upgraded although Critical: 1 server is upgraded although its BMC reports health Critical, as the configuration says (upgrade_when_critical); apply accepts it back on and at target whatever health its BMC then reports:\n  a/r01/s4: "+reason+"\n",
		"not observed:", "Held back:", "Stage ", "Warnings:")
	if !strings.Contains(text.String(), "upgraded although its BMC reports health Critical: "+reason) {
		t.Errorf("the server's own lines do not say it:\n%s", text)
	}
	first("markdown", md.String(), "> [!CAUTION]\n> **Upgraded although Critical:** 1 server is upgraded although its BMC reports health Critical",
		"> [!WARNING]", "held back**", "**Images**", "<details>")
	if !strings.Contains(md.String(), "> - `a/r01/s4`: "+reason+"\n") {
		t.Errorf("markdown does not name the server and reason:\n%s", md)
	}
	if !strings.HasPrefix(md.String(), "### rackform plan: 1 server upgraded although Critical; ") {
		t.Errorf("the headline does not lead with it: %.200s", md)
	}

	b, err := os.ReadFile("../../../../../../planner/plan/testdata/format-1.6-signed.plan.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	js := BuildJSON(p, plan.SHA256(b))
	if len(js.UpgradedAlthoughCritical) != 1 || js.UpgradedAlthoughCritical[0] != (JSONCritical{"a/r01/s4", reason}) {
		t.Errorf("show -json upgraded_although_critical = %+v", js.UpgradedAlthoughCritical)
	}
	if o := js.Servers["a/r01/s4"].UpgradeWhenCritical; o == nil || o.Reason != reason {
		t.Errorf("show -json server s4 upgrade_when_critical = %+v", o)
	}
	if o := js.Servers["a/r01/s1"].UpgradeWhenCritical; o != nil {
		t.Errorf("show -json server s1 has an override: %+v", o)
	}

	var page bytes.Buffer
	if err := WriteHTMLCells(&page, p, plan.SHA256(b), PlanCells()); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	section := `<section class="critical" id="upgraded-although-critical"><h2>Upgraded although Critical</h2>`
	first("HTML", h, section, "<h2>Racks</h2>", `class="notice"`)
	for _, want := range []string{
		`<li data-server="a/r01/s4"><strong>a/r01/s4</strong>: ` + reason + `</li>`,
		`<div class="cell upgrade critical-cell" data-server="a/r01/s4"`,
		`upgraded although its BMC reports health Critical: ` + reason + `">`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(h, `critical-cell" data-server="a/r01/s1"`) {
		t.Error("a server without the override is outlined")
	}
	// A plan without such a server has no such section.
	page.Reset()
	p.Servers[3].UpgradeWhenCritical = nil
	if err := WriteHTMLCells(&page, p, "", PlanCells()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), `id="upgraded-although-critical"`) {
		t.Error("the section is shown for a plan without such servers")
	}
}
