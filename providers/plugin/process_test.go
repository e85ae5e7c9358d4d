package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
	"github.com/rackform/rackform/providers/redfish"
)

// The out-of-process tests run a real plugin binary, built once from
// testdata/fakeplugin, over real go-plugin with AutoMTLS.
var fakePlugin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain serves the built-in Redfish provider when this test binary is
// run as "rackform provider redfish": the out-of-process tests re-execute it
// exactly as rackform re-executes itself (BuiltinSpec), under the program
// name a testscript would give it.
func TestMain(m *testing.M) {
	if os.Getenv(envTestHost) != "" {
		testHostMain()
	}
	if filepath.Base(os.Args[0]) == "rackform" && slices.Equal(os.Args[1:], []string{"provider", redfish.Name}) {
		logger := NewLogger(redfish.Name, os.Stderr, os.Getenv)
		Serve(redfish.New(redfish.Options{Logger: logger}), logger)
		os.Exit(0)
	}
	code := m.Run()
	if fakePlugin.dir != "" {
		os.RemoveAll(fakePlugin.dir)
	}
	os.Exit(code)
}

func buildFakePlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a plugin binary")
	}
	return buildFakePluginTB(t)
}

func buildFakePluginTB(t testing.TB) string {
	t.Helper()
	fakePlugin.once.Do(func() {
		fakePlugin.dir, fakePlugin.err = os.MkdirTemp("", "rackform-plugin-test")
		if fakePlugin.err != nil {
			return
		}
		fakePlugin.path = filepath.Join(fakePlugin.dir, BinaryPrefix+"fake")
		out, err := exec.Command("go", "build", "-o", fakePlugin.path, "./testdata/fakeplugin").CombinedOutput()
		if err != nil {
			fakePlugin.err = errors.New("go build ./testdata/fakeplugin: " + err.Error() + "\n" + string(out))
		}
	})
	if fakePlugin.err != nil {
		t.Fatal(fakePlugin.err)
	}
	return fakePlugin.path
}

// syncBuffer is a log sink safe for go-plugin's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startFake(t *testing.T, env ...string) (*Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Trace, Output: logs})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, Spec{Name: "fake", Path: buildFakePlugin(t), Env: env}, logger)
	if err != nil {
		t.Fatalf("Start: %v\nlogs:\n%s", err, logs)
	}
	t.Cleanup(c.Close)
	return c, logs
}

func TestProcessConformance(t *testing.T) {
	providertest.Run(t, providertest.FakeFixture(func(t *testing.T) providers.Provider {
		c, _ := startFake(t)
		return c
	}))
}

// TestProcessHashMismatch checks that a binary whose hash differs from the
// pin is refused before it runs: the plugin writes a marker file when it
// starts, and with the right hash it does.
func TestProcessHashMismatch(t *testing.T) {
	bin := buildFakePlugin(t)
	sum, err := FileSHA256(bin)
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("0", 64)
	for _, c := range []struct {
		name    string
		sha256  string
		refused bool
	}{
		{"pinned hash", sum, false},
		{"other hash", wrong, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "started")
			client, err := Start(t.Context(), Spec{Name: "fake", Path: bin, SHA256: c.sha256, Env: []string{"FAKEPLUGIN_MARKER=" + marker}}, nil)
			if client != nil {
				client.Close()
			}
			_, statErr := os.Stat(marker)
			ran := statErr == nil
			if !c.refused {
				if err != nil || !ran {
					t.Fatalf("Start with the right hash: %v (plugin ran: %v)", err, ran)
				}
				return
			}
			var mismatch *HashMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("Start = %v, want a HashMismatchError", err)
			}
			for _, part := range []string{bin, "SHA-256 " + sum, wrong + " was expected"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
			if ran {
				t.Error("the refused binary was executed")
			}
		})
	}
}

// TestProcessHandshakeRefused starts binaries that are not plugins of this
// protocol: each is refused with a message saying why.
func TestProcessHandshakeRefused(t *testing.T) {
	bin := buildFakePlugin(t)
	script := filepath.Join(t.TempDir(), "rackform-provider-script")
	writeFile(t, script, "#!/bin/sh\necho hello\n", 0o755)
	cases := []struct {
		name string
		path string
		env  []string
		want []string
	}{
		{"protocol major 2", bin, []string{"FAKEPLUGIN_PROTOCOL=2"},
			[]string{`starting provider "fake"`, "speaks another protocol major than this rackform (1)", "Plugin version: 2", "for protocol 1"}},
		{"wrong cookie", bin, []string{"FAKEPLUGIN_COOKIE=other"},
			[]string{`starting provider "fake"`, "handshake failed", "This binary is a plugin"}},
		{"not a plugin", script, nil,
			[]string{`starting provider "fake"`, "handshake failed", "hello", "is this a rackform provider plugin for protocol 1?"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			client, err := Start(ctx, Spec{Name: "fake", Path: c.path, Env: c.env}, nil)
			if err == nil {
				client.Close()
				t.Fatal("Start succeeded, want a refusal")
			}
			for _, part := range c.want {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error does not mention %q:\n%v", part, err)
				}
			}
		})
	}
}

// TestProcessCrash kills the plugin in the middle of an Observe: every
// target is still reported, and the error names the provider.
func TestProcessCrash(t *testing.T) {
	c, logs := startFake(t, "FAKEPLUGIN_CRASH=observe")
	ctx := t.Context()
	if d := c.Configure(ctx, &providers.ConfigureRequest{Config: []byte(`{"username":"u"}`)}); d.HasErrors() {
		t.Fatal(d.Err())
	}
	targets := []providers.Target{
		{Name: "a", Endpoint: "https://127.1.0.1:8443"},
		{Name: "b", Endpoint: "https://127.1.0.2:8443"},
		{Name: "c", Endpoint: "https://127.1.0.3:8443"},
	}
	got := map[string]*providers.Observation{}
	diags := c.Observe(ctx, &providers.ObserveRequest{Targets: targets, Concurrency: 1}, func(o *providers.Observation) error {
		got[o.Server] = o
		return nil
	})
	// The plugin died: the provider is unavailable, which callers tell
	// apart from a server's failure.
	if !diags.Unavailable() || !strings.Contains(diags[0].Detail, `Observe on provider "fake" failed`) {
		t.Errorf("diagnostics = %v, want provider fake unavailable", diags)
	}
	// Targets the plugin did not report before it died are reported with
	// the provider unavailable, not as servers that failed.
	for name, o := range got {
		if o.Diagnostics.HasErrors() && !o.Diagnostics.Unavailable() {
			t.Errorf("%s: %v, want provider unavailable", name, o.Diagnostics)
		}
	}
	if len(got) != len(targets) {
		t.Errorf("got %d observations, want one per target (%d): %v", len(got), len(targets), got)
	}
	if !strings.Contains(logs.String(), "crashing on purpose") {
		t.Errorf("the plugin's last log line did not reach the host log:\n%s", logs)
	}
	// The process is gone: later calls fail with a diagnostic, not a hang.
	_, diags = c.Task(ctx, &providers.TaskRequest{Target: targets[0], TaskURI: "/t/1"})
	if !diags.Unavailable() || diags[0].Server != "a" || !strings.Contains(diags[0].Detail, "plugin process has exited") {
		t.Errorf("Task after the crash: %v, want a failure naming server a and the exited process", diags)
	}
}

// TestProcessLogs checks that plugin log lines reach the host logger at
// their own level, and that credentials never reach any log.
func TestProcessLogs(t *testing.T) {
	c, logs := startFake(t)
	ctx := t.Context()
	const secret = "pw-SECRET-4711"
	if d := c.Configure(ctx, &providers.ConfigureRequest{Config: []byte(`{"username":"u","password":"` + secret + `"}`)}); d.HasErrors() {
		t.Fatal(d.Err())
	}
	target := providers.Target{Name: "a", Endpoint: "https://127.1.0.1:8443", Credentials: &providers.Credentials{Username: "root", Password: secret}}
	c.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{target}}, func(*providers.Observation) error { return nil })
	c.Close()
	out := logs.String()
	var info, debug bool
	for _, line := range strings.Split(out, "\n") {
		info = info || strings.Contains(line, "[INFO]") && strings.Contains(line, "configure called")
		debug = debug || strings.Contains(line, "[DEBUG]") && strings.Contains(line, "observe called")
	}
	if !info || !debug {
		t.Errorf("plugin log lines not re-logged at their level (info %v, debug %v):\n%s", info, debug, out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("a credential reached the log:\n%s", out)
	}
	// go-plugin says so when both ends negotiate AutoMTLS.
	for _, want := range []string{"configuring client automatic mTLS", "configuring server automatic mTLS"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: the connection may not be mutually authenticated:\n%s", want, out)
		}
	}
}

// TestProcessLargeFleet observes a fleet whose request is larger than gRPC's
// default 4 MiB message limit: every server must come back, one per target.
func TestProcessLargeFleet(t *testing.T) {
	c, _ := startFake(t)
	ctx := t.Context()
	if d := c.Configure(ctx, &providers.ConfigureRequest{Config: []byte(`{"username":"u"}`)}); d.HasErrors() {
		t.Fatal(d.Err())
	}
	const n = 50_000
	pad := strings.Repeat("x", 80)
	targets := make([]providers.Target, n)
	for i := range targets {
		targets[i] = providers.Target{Name: fmt.Sprintf("east-1/r%03d/c%05d-%s", i/40, i, pad), Endpoint: "https://127.1.0.1:8443"}
	}
	seen := make(map[string]bool, n)
	diags := c.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		seen[o.Server] = o.Reachable
		return nil
	})
	if diags.HasErrors() {
		t.Fatalf("Observe: %v", diags.Err())
	}
	if len(seen) != n {
		t.Errorf("got %d observations, want %d", len(seen), n)
	}
}

// TestKilledPluginLeavesNoSocket: a plugin killed outright cannot remove
// its gRPC socket; Close removes the directory it was made in, so killed
// plugins leave nothing in the temporary directory.
func TestKilledPluginLeavesNoSocket(t *testing.T) {
	c, _ := startFake(t)
	entries, err := os.ReadDir(c.sockets)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the plugin's socket directory holds %v (%v), want its one socket", entries, err)
	}
	if err := syscall.Kill(c.pc.ReattachConfig().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !c.Exited() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left, _ := os.ReadDir(c.sockets); len(left) != 1 {
		t.Fatalf("after SIGKILL the socket directory holds %v: the test kills nothing that would leave a socket", left)
	}
	c.Close()
	if _, err := os.Stat(c.sockets); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close the plugin's socket directory is still there (%v)", err)
	}
}
