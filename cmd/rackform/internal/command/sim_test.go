package command

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers/sim"
)

func TestSimAddresses(t *testing.T) {
	for _, tc := range []struct {
		base string
		n    int
		want []string
		err  string
	}{
		{"127.1.1.1", 3, []string{"127.1.1.1", "127.1.1.2", "127.1.1.3"}, ""},
		{"127.1.1.253", 3, []string{"127.1.1.253", "127.1.1.254", "127.1.2.1"}, ""},
		{"127.1.255.254", 2, []string{"127.1.255.254", "127.2.0.1"}, ""},
		{"10.0.0.1", 1, nil, "not a loopback"},
		{"127.255.255.254", 2, nil, "do not fit"},
	} {
		t.Run(tc.base, func(t *testing.T) {
			ips, err := simAddresses(tc.base, tc.n)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ip := range ips {
				got = append(got, ip.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n must be at least 1"},
		{[]string{"-profile", "toaster", "-port", "0"}, "unknown profile"},
		{[]string{"-fault", "bmc-0001"}, "want NAME=KIND"},
		{[]string{"-fault", "bmc-0001=explode"}, "unknown fault kind"},
		{[]string{"-fault-rate", "busy=2"}, "P in [0,1]"},
		{[]string{"-at-target", "bmc-0001"}, "-at-target needs -target"},
		{[]string{"-at-target", "bmc-0099", "-target", "BIOS=2"}, "bmc-0099, not BMCs"},
		{[]string{"-base", "192.168.0.1"}, "not a loopback"},
		{[]string{"-ca-out", "x.pem"}, "-ca-out needs -tls"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCommand(t, false, append([]string{"sim"}, tc.args...)...)
			if code == ExitOK || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want a failure mentioning %q", code, stderr, tc.want)
			}
		})
	}
}

func TestSimReadyOutput(t *testing.T) {
	bmcs := func(n int, scheme string) []sim.BMCInfo {
		var out []sim.BMCInfo
		ips, _ := simAddresses("127.1.1.1", n)
		for i, ip := range ips {
			out = append(out, sim.BMCInfo{Name: fmt.Sprintf("bmc-%04d", i+1), URL: scheme + "://" + ip.String() + ":8443", Profile: sim.Profiles()[i%4]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		bmcs []sim.BMCInfo
		s    fleetServe
	}{
		{"small", bmcs(3, "http"), fleetServe{Options: sim.Options{Username: "admin", Password: "rackform-sim"}}},
		{"large-tls-admin", bmcs(300, "https"), fleetServe{Options: sim.Options{Username: "root", Password: "pw", TLS: true}, Admin: "127.0.0.1:9900", CAOut: "ca.pem"}},
		// A BMC with several systems lists them.
		{"multi-system", append(bmcs(1, "http"), sim.BMCInfo{Name: "node0", URL: "http://127.1.1.2:8443", Profile: sim.ProfileCrayEX, Systems: []string{"Node0", "Node1"}}),
			fleetServe{Options: sim.Options{Username: "admin", Password: "rackform-sim"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printReady(&b, tc.bmcs, tc.s)
			golden(t, "testdata/sim/"+tc.name+".golden", []byte(b.String()))
		})
	}
}

// lockedBuffer is written by the command's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestSimServesUntilCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	m := &Meta{Streams: Streams{Stdin: strings.NewReader(""), Stdout: pw, Stderr: &stderr}, Getenv: func(k string) string {
		if k == "RACKFORM_SIM_PASSWORD" {
			return "from-env"
		}
		return ""
	}}
	// The deadline ends the command (and so the output) if the test goes wrong.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	codec := make(chan int, 1)
	go func() {
		codec <- m.run(ctx, []string{"sim", "-n", "3", "-base", "127.78.1.1", "-port", "0", "-profile", "mixed", "-speed", "6000",
			"-admin", "127.0.0.1:0", "-fault", "bmc-0002=busy", "-firmware", "BIOS=1.0", "-target", "BIOS=2.0", "-at-target", "bmc-0003"})
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var out []string
	var admin string
	urls := map[string]string{}
	for len(urls) < 3 && lines.Scan() {
		l := lines.Text()
		out = append(out, l)
		if a, ok := strings.CutPrefix(l, "rackform sim: admin API: "); ok {
			admin = a
		}
		if f := strings.Fields(l); len(f) == 3 && strings.HasPrefix(f[0], "bmc-") {
			urls[f[0]] = f[1]
		}
	}
	go io.Copy(io.Discard, pr)
	if len(out) == 0 || !strings.HasPrefix(out[0], "rackform sim: ready: 3 BMCs on 127.78.1.1..127.78.1.3 various ports (http)") {
		t.Fatalf("ready output:\n%s\nstderr: %s", strings.Join(out, "\n"), stderr.String())
	}
	if !strings.Contains(out[1], "admin / from-env") {
		t.Errorf("credentials line %q", out[1])
	}
	c := &http.Client{Timeout: 5 * time.Second}
	getJSON := func(u string, auth bool) (int, map[string]any) {
		req, _ := http.NewRequest("GET", u, nil)
		if auth {
			req.SetBasicAuth("admin", "from-env")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	if s, _ := getJSON(urls["bmc-0001"]+"/redfish/v1/Systems", true); s != 200 {
		t.Errorf("bmc-0001 (dmtf): %d", s)
	}
	if s, _ := getJSON(urls["bmc-0002"]+"/redfish/v1/Systems", true); s != 503 {
		t.Errorf("bmc-0002 with -fault busy: %d, want 503", s)
	}
	if _, v := getJSON(urls["bmc-0003"]+"/redfish/v1/UpdateService/FirmwareInventory/BMC", true); v["Version"] == nil {
		t.Errorf("bmc-0003 (ami) BMC item %v", v)
	}
	_, st := getJSON(admin+"/stats/bmc-0003", false)
	if got := st["versions"].(map[string]any)["BIOS"]; got != "2.0" {
		t.Errorf("bmc-0003 (-at-target) BIOS %v, want 2.0", got)
	}
	_, st = getJSON(admin+"/stats/bmc-0001", false)
	if got := st["versions"].(map[string]any)["BIOS"]; got != "1.0" {
		t.Errorf("bmc-0001 BIOS %v, want 1.0", got)
	}
	cancel()
	select {
	case code := <-codec:
		if code != ExitOK {
			t.Errorf("exit %d, stderr %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sim did not stop after cancellation")
	}
	if !strings.Contains(stderr.String(), "rackform sim: stopped") {
		t.Errorf("stderr %q", stderr.String())
	}
	u := strings.TrimPrefix(urls["bmc-0001"], "http://")
	if conn, err := net.DialTimeout("tcp", u, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still listening after stop", u)
	}
}

func TestSimTLSWritesTheCA(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pr, pw := io.Pipe()
	m := &Meta{Streams: Streams{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard}, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- m.run(ctx, []string{"sim", "-n", "1", "-base", "127.78.2.1", "-port", "0", "-tls", "-ca-out", ca, "-password", "pw1"})
		pw.Close()
	}()
	var url string
	lines := bufio.NewScanner(pr)
	for url == "" && lines.Scan() {
		if f := strings.Fields(lines.Text()); len(f) == 3 && f[0] == "bmc-0001" {
			url = f[1]
		}
	}
	go io.Copy(io.Discard, pr)
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("-ca-out wrote no certificate")
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", url+"/redfish/v1/Systems", nil)
	req.SetBasicAuth("admin", "pw1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("verified HTTPS to %s: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d with -password pw1", resp.StatusCode)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d", code)
	}
}

func TestSimHelp(t *testing.T) {
	code, stdout, _ := runCommand(t, false, "sim", "-h")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	golden(t, "testdata/sim/help.golden", []byte(stdout))
}
