package redfish

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/providers"
)

// seedCaptures are the public captures whose UpdateService documents seed
// the fuzz targets: every vendor in ../shared/redfish-mockups.
var seedCaptures = []string{
	"dmtf/public-rackmount1", "dmtf/public-liquid-cooled-server",
	"csm/DL325", "csm/XL675d_A40", "csm/EX235a", "csm/Gigabyte", "csm/OpenBMC-stock",
	"dell/R750", "lenovo/SR670V2", "supermicro/SYS-821GE-TNHR",
}

// mockupDocs returns the UpdateService documents of the public captures
// (read where internal/testenv finds them) whose path contains sub, as
// fuzz seeds.
func mockupDocs(f *testing.F, sub string) [][]byte {
	f.Helper()
	var docs [][]byte
	for _, c := range seedCaptures {
		_ = filepath.WalkDir(filepath.Join(testenv.Mockup(f, c), "UpdateService"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") && strings.Contains(filepath.ToSlash(p), sub) {
				if b, err := os.ReadFile(p); err == nil {
					docs = append(docs, b)
				}
			}
			return nil
		})
	}
	if len(docs) == 0 {
		f.Fatalf("no capture documents under %s", sub)
	}
	return docs
}

// FuzzParseTaskBody feeds task monitor answers: it must never panic, never
// call garbage "Completed", and give percentages in range.
func FuzzParseTaskBody(f *testing.F) {
	for _, s := range []string{
		`{"@odata.type":"#Task.v1_4_3.Task","TaskState":"Running","PercentComplete":40,"Messages":[{"Message":"m"}]}`,
		`{"TaskState":"Completed","TaskStatus":"Critical"}`, `{"error":{"code":"iLO.0.10.ExtendedInfo"}}`, ``, `{`, `null`, `[]`,
	} {
		for _, st := range []int{200, 202, 204, 404, 500} {
			f.Add(st, []byte(s))
		}
	}
	for _, d := range mockupDocs(f, "UpdateService/index.json") {
		f.Add(200, d)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		st, ok := parseTaskBody("/t", status, body)
		if !ok {
			return
		}
		if st.Percent < -1 || st.Percent > 100 {
			t.Errorf("percent %d out of range", st.Percent)
		}
		switch st.State {
		case providers.TaskNew, providers.TaskStarting, providers.TaskRunning, providers.TaskCompleted,
			providers.TaskException, providers.TaskKilled, providers.TaskGone:
		default:
			t.Errorf("state %q is not a provider task state", st.State)
		}
		if st.State == providers.TaskCompleted && len(strings.TrimSpace(string(body))) > 0 && !json.Valid(body) {
			t.Errorf("invalid JSON taken for a completed task: %q", body)
		}
	})
}

// FuzzParseInventory decodes SoftwareInventory members as the provider
// does and normalises them: no panic, trimmed versions, a non-empty id
// whenever there is a name, a state the contract names (and, for a
// member that does not run, the sign that says so), and an
// order-independent fingerprint.
func FuzzParseInventory(f *testing.F) {
	for _, d := range mockupDocs(f, "Inventory/") {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var doc invDoc
		if json.Unmarshal(body, &doc) != nil {
			return
		}
		it := memberOf(&doc)
		c := it.Component
		if c.Version != strings.TrimSpace(c.Version) {
			t.Errorf("version %q not trimmed", c.Version)
		}
		if c.ID == "" && c.Name != "" {
			t.Errorf("component %q has no id", c.Name)
		}
		switch c.State {
		case providers.StateActive:
		case providers.StatePrevious, providers.StatePending, providers.StateAvailable, providers.StateStandby, providers.StateAbsent:
			if c.StateSign == "" {
				t.Errorf("member %q is %s with no sign saying why", c.ID, c.State)
			}
		default:
			t.Errorf("member %q has state %q", c.ID, c.State)
		}
		other := providers.Component{ID: "zz", Version: "1"}
		if fingerprint("On", "OK", []providers.Component{c, other}) != fingerprint("On", "OK", []providers.Component{other, c}) {
			t.Error("fingerprint depends on order")
		}
		// The other readers of raw bodies must not panic on it either.
		_ = taskURIFromBody(body)
		_ = taskResourceFromBody(body)
	})
}

// FuzzParseRetryAfter: never negative, never beyond the bound it accepts.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"5", "0", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "120", "", "1e3", " 7 "} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if !ok && d != 0 {
			t.Errorf("not ok but %v", d)
		}
		if d < 0 {
			t.Errorf("negative wait %v for %q", d, s)
		}
	})
}
