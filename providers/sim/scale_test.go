package sim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fleetSpecs makes n BMC specs on 127.77.x.y (a range other tests do not
// use), port 0, cycling through the profiles.
func fleetSpecs(n int) []BMCSpec {
	specs := make([]BMCSpec, n)
	for i := range specs {
		specs[i] = BMCSpec{
			Name:    fmt.Sprintf("bmc-%05d", i),
			Addr:    fmt.Sprintf("127.77.%d.%d:0", 1+i/250, 1+i%250),
			Profile: Profiles()[i%len(Profiles())],
			PowerOn: true,
		}
	}
	return specs
}

func TestTenThousandBMCs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 10,000-BMC fleet")
	}
	if raceEnabled {
		t.Skip("-race: the race detector caps live goroutines below 10,000")
	}
	const n = 10000
	begin := time.Now()
	f, err := New(Options{Username: testUser, Password: testPass, Speed: 6000}, fleetSpecs(n))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	started := time.Since(begin)
	bmcs := f.BMCs()
	tr := &http.Transport{DisableKeepAlives: true}
	c := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	const stride = 37 // a sample of 271 BMCs spread over every profile and address block
	for i := 0; i < n; i += stride {
		wg.Add(1)
		sem <- struct{}{}
		go func(b BMCInfo) {
			defer wg.Done()
			defer func() { <-sem }()
			req, _ := http.NewRequest("GET", b.URL+"/redfish/v1/Systems", nil)
			req.SetBasicAuth(testUser, testPass)
			resp, err := c.Do(req)
			if err != nil {
				errs <- fmt.Errorf("%s: %w", b.Name, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Errorf("%s: status %d", b.Name, resp.StatusCode)
			}
		}(bmcs[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := f.Stats(bmcs[stride].Name).Requests; got != 1 {
		t.Errorf("%s served %d requests, want 1", bmcs[stride].Name, got)
	}
	// Cancelling the start context stops the fleet.
	cancel()
	select {
	case <-f.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("fleet did not stop after its context ended")
	}
	f.Close()
	for _, i := range []int{0, 1234, n - 1} {
		addr := strings.TrimPrefix(bmcs[i].URL, "http://")
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still listens on %s after Close", bmcs[i].Name, addr)
		}
	}
	t.Logf("10,000 BMCs started in %v, whole test %v", started, time.Since(begin))
}

func TestTLS(t *testing.T) {
	f := start(t, Options{TLS: true}, BMCSpec{Name: "a", Addr: "127.77.250.1:0"}, BMCSpec{Name: "b", Addr: "127.77.250.2:0"})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(f.CACertPEM()) {
		t.Fatal("CACertPEM is not a PEM certificate")
	}
	verified := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, b := range f.BMCs() {
		if b.URL[:8] != "https://" {
			t.Fatalf("URL %s", b.URL)
		}
		resp, err := verified.Get(b.URL + "/redfish/v1/")
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		resp.Body.Close()
	}
	if _, err := (&http.Client{Timeout: 5 * time.Second}).Get(f.BMCs()[0].URL + "/redfish/v1/"); err == nil {
		t.Error("a client without the CA trusted the simulator")
	}
}

// BenchmarkFleetMemory reports the Go heap and stack a started fleet holds
// per BMC (kernel socket buffers not included).
func BenchmarkFleetMemory(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := New(Options{Username: testUser, Password: testPass}, fleetSpecs(n))
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		used := (after.HeapAlloc + after.StackInuse) - (before.HeapAlloc + before.StackInuse)
		b.ReportMetric(float64(used)/n, "bytes/BMC")
		f.Close()
	}
}

// BenchmarkFleetMemoryActive reports the memory per BMC once each BMC holds
// a session and an update task and has served a few requests.
func BenchmarkFleetMemoryActive(b *testing.B) {
	const n = 2000
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := New(Options{Username: testUser, Password: testPass, Speed: 6000}, fleetSpecs(n))
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for _, bmc := range f.BMCs() {
			wg.Add(1)
			sem <- struct{}{}
			go func(u string) {
				defer wg.Done()
				defer func() { <-sem }()
				for _, r := range []struct{ method, path, body string }{
					{"POST", "/redfish/v1/SessionService/Sessions", `{"UserName":"` + testUser + `","Password":"` + testPass + `"}`},
					{"GET", "/redfish/v1/Systems", ""},
					{"POST", "/FWUpdate", "image"},
				} {
					req, _ := http.NewRequest(r.method, u+r.path, strings.NewReader(r.body))
					req.SetBasicAuth(testUser, testPass)
					req.Header.Set("X-Image-Name", "nic-2.0.bin")
					if resp, err := c.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}(bmc.URL)
		}
		wg.Wait()
		runtime.GC()
		runtime.ReadMemStats(&after)
		used := (after.HeapAlloc + after.StackInuse) - (before.HeapAlloc + before.StackInuse)
		b.ReportMetric(float64(used)/n, "bytes/BMC")
		f.Close()
	}
}

// BenchmarkRequests measures how many authenticated GETs per second the
// simulator serves (keep-alive clients over 100 BMCs), so a provider
// benchmark can tell whether the simulator is its bottleneck.
func BenchmarkRequests(b *testing.B) {
	f, err := New(Options{Username: testUser, Password: testPass}, fleetSpecs(100))
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bmcs := f.BMCs()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	var next atomic.Int64
	b.ResetTimer()
	begin := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := bmcs[next.Add(1)%int64(len(bmcs))].URL
			req, _ := http.NewRequest("GET", u+"/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)", nil)
			req.SetBasicAuth(testUser, testPass)
			resp, err := c.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "req/s")
}
