package redfish

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
)

func TestParseTaskBody(t *testing.T) {
	const uri = "/redfish/v1/TaskService/TaskMonitors/7"
	cases := []struct {
		name   string
		status int
		body   string
		want   providers.TaskStatus
		ok     bool
	}{
		{"monitor gone", 404, ``, providers.TaskStatus{URI: uri, State: providers.TaskGone, Percent: -1}, true},
		{"monitor gone (410)", 410, `{"error":{}}`, providers.TaskStatus{URI: uri, State: providers.TaskGone, Percent: -1}, true},
		{"202 with a New task", 202, `{"@odata.type":"#Task.v1_4_3.Task","TaskState":"New","PercentComplete":0}`,
			providers.TaskStatus{URI: uri, State: providers.TaskNew, Percent: 0}, true},
		{"202 Starting", 202, `{"TaskState":"Starting"}`, providers.TaskStatus{URI: uri, State: providers.TaskStarting, Percent: -1}, true},
		{"202 with no body", 202, ``, providers.TaskStatus{URI: uri, State: providers.TaskRunning, Percent: -1}, true},
		{"202 with an iLO message body", 202, `{"error":{"code":"iLO.0.10.ExtendedInfo"}}`, providers.TaskStatus{URI: uri, State: providers.TaskRunning, Percent: -1}, true},
		{"Pending counts as running", 200, `{"TaskState":"Pending","PercentComplete":10}`, providers.TaskStatus{URI: uri, State: providers.TaskRunning, Percent: 10}, true},
		{"completed with messages", 200, `{"@odata.type":"#Task.v1_4_3.Task","TaskState":"Completed","TaskStatus":"OK","Messages":[{"Message":"done"}]}`,
			providers.TaskStatus{URI: uri, State: providers.TaskCompleted, Percent: 100, Messages: []string{"done"}}, true},
		{"completed but critical is a failure", 200, `{"TaskState":"Completed","TaskStatus":"Critical","Messages":[{"MessageId":"Update.1.0.VerificationFailed"}]}`,
			providers.TaskStatus{URI: uri, State: providers.TaskException, Percent: -1, Messages: []string{"Update.1.0.VerificationFailed"}}, true},
		{"exception", 200, `{"TaskState":"Exception","Messages":[{"Message":"bad image"}]}`,
			providers.TaskStatus{URI: uri, State: providers.TaskException, Percent: -1, Messages: []string{"bad image"}}, true},
		{"cancelled is killed", 200, `{"TaskState":"Cancelled"}`, providers.TaskStatus{URI: uri, State: providers.TaskKilled, Percent: -1}, true},
		{"operation result after the task (204)", 204, ``, providers.TaskStatus{URI: uri, State: providers.TaskCompleted, Percent: 100}, true},
		{"operation result after the task (200, not a task)", 200, `{"@odata.id":"/redfish/v1/Systems/1"}`, providers.TaskStatus{URI: uri, State: providers.TaskCompleted, Percent: 100}, true},
		{"garbage on 200 is not success", 200, `{"TaskState": `, providers.TaskStatus{URI: uri, Percent: -1}, false},
		{"unknown state on 200", 200, `{"TaskState":"Levitating"}`, providers.TaskStatus{URI: uri, Percent: -1}, false},
		{"percent out of range ignored", 202, `{"TaskState":"Running","PercentComplete":250}`, providers.TaskStatus{URI: uri, State: providers.TaskRunning, Percent: -1}, true},
		{"server error", 500, `{}`, providers.TaskStatus{URI: uri, Percent: -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseTaskBody(uri, c.status, []byte(c.body))
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	a := []providers.Component{{ID: "BMC", Name: "iLO 5", Version: "2.46"}, {ID: "BIOS", Version: "A43"}}
	b := []providers.Component{{ID: "BIOS", Name: "System ROM", Version: "A43"}, {ID: "BMC", Version: "2.46"}}
	base := fingerprint("On", "OK", a)
	// Plan files keep fingerprints and apply compares them with a new
	// read: the text hashed never changes (sha256 of
	// "power\x00On\nhealth\x00OK\nBIOS\x00A43\nBMC\x002.46\n").
	if want := "sha256:56d0630d4b7387a07f695f9d302d765e4f83e36401c751ab44a159198f802fe7"; base != want {
		t.Errorf("fingerprint = %s, want %s", base, want)
	}
	// Pairs sort as the strings "<id>\x00<version>".
	odd := []providers.Component{{ID: "AB", Version: "1"}, {ID: "A", Version: "\x00"}, {ID: "A"}}
	if got, want := fingerprint("", "", odd), "sha256:9bcef484dcf24296d7e978be01e475357da2c5120d45d77545e588573e232aa4"; got != want {
		t.Errorf("fingerprint of %v = %s, want %s", odd, got, want)
	}
	if got := fingerprint("On", "OK", b); got != base {
		t.Errorf("order or names changed the fingerprint: %s vs %s", got, base)
	}
	for name, other := range map[string]string{
		"version": fingerprint("On", "OK", []providers.Component{{ID: "BMC", Version: "2.47"}, {ID: "BIOS", Version: "A43"}}),
		"power":   fingerprint("Off", "OK", a),
		"health":  fingerprint("On", "Warning", a),
		"removed": fingerprint("On", "OK", a[:1]),
	} {
		if other == base {
			t.Errorf("a different %s gives the same fingerprint", name)
		}
	}
}

// TestAutoConcurrency: the default concurrency is what the open-file
// limit and a memory budget (256 MiB, or a quarter of the available memory
// when less) allow, never below 64, not a small constant.
func TestAutoConcurrency(t *testing.T) {
	for _, c := range []struct {
		files int
		mem   int64
		want  int
	}{
		{20000, 24 << 30, 2560},   // the memory budget bounds it: 320 MiB / 128 KiB
		{1000, 24 << 30, 372},     // file descriptors bound it
		{1 << 20, 1 << 30, 2048},  // a quarter of 1 GiB is less than the budget
		{1 << 20, 256 << 20, 512}, // memory bounds it: a quarter of 256 MiB / 128 KiB
		{1024, 0, 384},            // memory unknown
		{300, 1 << 20, 64},        // never below 64
		{0, 0, 2560},              // nothing known: the memory budget alone
	} {
		if got := autoConcurrency(c.files, c.mem); got != c.want {
			t.Errorf("autoConcurrency(%d files, %d bytes) = %d, want %d", c.files, c.mem, got, c.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	m := newMockupServer(t, "csm/Gigabyte")
	if err := os.WriteFile(caFile, []byte(caPEM(m)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		json     string
		wantErrs []string // attribute names the error diagnostics name, in any order
		check    func(t *testing.T, c config)
	}{
		{"defaults", `{}`, nil, func(t *testing.T, c config) {
			if c.Concurrency != autoConcurrency(fileLimit(), availableMemory()) || c.Concurrency < 64 || c.PerBMCLimit != 4 || c.Insecure || c.UpdateMethod != MethodAuto || c.Timeout != 30*time.Second {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{"all set", `{"username":"u","password":"p","insecure":true,"timeout":"5s","concurrency":8,"per_bmc_limit":3,
			"retry_max_attempts":2,"retry_base_delay":0.1,"retry_max_delay":"1s","poll_interval":"50ms","update_method":"push"}`, nil,
			func(t *testing.T, c config) {
				want := config{Username: "u", Password: "p", Insecure: true, Timeout: 5 * time.Second, Concurrency: 8, PerBMCLimit: 3,
					MaxAttempts: 2, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, PollInterval: 50 * time.Millisecond, UpdateMethod: MethodPush}
				if diff := cmp.Diff(want, c); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}},
		{"ca bundle from a file", `{"ca_bundle":` + jsonString(caFile) + `}`, nil, func(t *testing.T, c config) {
			if len(c.CABundle) == 0 || c.tlsConfig().RootCAs == nil || c.tlsConfig().InsecureSkipVerify {
				t.Error("CA bundle not loaded from the file")
			}
		}},
		{"ca bundle as PEM text", `{"ca_bundle":` + jsonString(caPEM(m)) + `}`, nil, nil},
		{"bad values name their attributes", `{"timeout":"soon","concurrency":0,"per_bmc_limit":1.5,"insecure":"yes","update_method":"ftp",
			"ca_bundle":"/nonexistent/ca.pem","password":42}`,
			[]string{"timeout", "concurrency", "per_bmc_limit", "insecure", "update_method", "ca_bundle", "password"}, nil},
		{"unknown attribute", `{"passwd":"x"}`, []string{"passwd"}, nil},
		{"max delay below base", `{"retry_base_delay":"2s","retry_max_delay":"1s"}`, []string{"retry_max_delay"}, nil},
		{"not an object", `[1,2]`, []string{"configuration"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, diags := parseConfig(json.RawMessage(c.json))
			var named []string
			for _, d := range diags {
				if d.Severity == providers.Error {
					named = append(named, d.Summary)
				}
			}
			if len(named) != len(c.wantErrs) {
				t.Fatalf("errors %q, want ones naming %q", named, c.wantErrs)
			}
			for _, attr := range c.wantErrs {
				found := false
				for _, n := range named {
					found = found || strings.Contains(n, attr)
				}
				if !found {
					t.Errorf("no error names %q: %q", attr, named)
				}
			}
			if err := diags.Err(); err != nil && strings.Contains(err.Error(), "42") {
				t.Error("a value leaked into a diagnostic")
			}
			if c.check != nil {
				c.check(t, cfg)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestDescribe(t *testing.T) {
	d, diags := New(Options{}).Describe(context.Background())
	if diags.HasErrors() || d.Name != "redfish" || d.ProtocolVersion != providers.ProtocolVersion {
		t.Fatalf("Describe: %+v %v", d, diags)
	}
	sensitive := map[string]bool{}
	for _, a := range d.Schema {
		sensitive[a.Name] = a.Sensitive
	}
	for _, want := range []string{"username", "password", "ca_bundle", "insecure", "timeout", "concurrency", "per_bmc_limit", "retry_max_attempts", "update_method"} {
		if _, ok := sensitive[want]; !ok {
			t.Errorf("schema lacks %s", want)
		}
	}
	if !sensitive["password"] {
		t.Error("password is not marked sensitive")
	}
}

func TestUnconfigured(t *testing.T) {
	p := New(Options{})
	d := p.Observe(context.Background(), &providers.ObserveRequest{Targets: []providers.Target{{Name: "a", Endpoint: "https://127.0.0.1:1"}}},
		func(*providers.Observation) error { return nil })
	if !d.HasErrors() {
		t.Error("Observe before Configure succeeded")
	}
	if _, d := p.Apply(context.Background(), &providers.ApplyRequest{Target: providers.Target{Name: "a", Endpoint: "https://127.0.0.1:1"},
		Step: providers.Step{Kind: providers.StepPowerOn}}, nil); !d.HasErrors() || d[0].Server != "a" {
		t.Errorf("Apply before Configure: %v", d)
	}
}

func TestMultipartBodyLength(t *testing.T) {
	payload := strings.Repeat("x", 12345)
	img := &image{name: "bios-2.0.bin", size: int64(len(payload)), body: nopCloser{strings.NewReader(payload)}}
	ct, body, size, err := multipartBody(map[string]any{"Targets": []string{}}, img)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://x", body)
	req.Header.Set("Content-Type", ct)
	req.ContentLength = size
	mr, err := req.MultipartReader()
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	total := int64(0)
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		n, _ := drain(p)
		total += n
		parts = append(parts, p.FormName()+":"+p.FileName())
	}
	if diff := cmp.Diff([]string{"UpdateParameters:", "UpdateFile:bios-2.0.bin"}, parts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	if total < int64(len(payload)) {
		t.Errorf("read %d bytes of parts, want at least the image's %d", total, len(payload))
	}

	// The announced length is exact.
	img = &image{name: "a.bin", size: 10, body: nopCloser{strings.NewReader("0123456789")}}
	_, body, size, _ = multipartBody(map[string]any{}, img)
	n, _ := drain(body)
	if n != size {
		t.Errorf("body has %d bytes, Content-Length says %d", n, size)
	}
	// A short image fails instead of hanging the BMC.
	img = &image{name: "a.bin", size: 10, body: nopCloser{strings.NewReader("012")}}
	_, body, _, _ = multipartBody(map[string]any{}, img)
	if _, err := drain(body); err == nil {
		t.Error("a short image streamed without error")
	}
}
