package redfish

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
)

// TestReadsOverlapOnlyOverHTTP2: the reads of an observation that do not
// depend on each other overlap on a BMC that answers over HTTP/2, and run
// one after another over HTTP/1.1 (they would only queue on its one
// connection); either way each document is read once and the observation
// is the same. Over HTTP/1.1 the BMC cannot see the difference between
// the two: TestSerialOnlyOverHTTP1 checks that half.
func TestReadsOverlapOnlyOverHTTP2(t *testing.T) {
	var want *providers.Observation
	for _, h2 := range []bool{false, true} {
		var (
			mu         sync.Mutex
			reads      = map[string]int{}
			protos     = map[int]bool{}
			overlapped bool
			systems    = make(chan struct{})
			once       sync.Once
		)
		m := newMockupServer(t, "dmtf/public-rackmount1", intercept(func(w http.ResponseWriter, r *http.Request) bool {
			path := strings.TrimSuffix(r.URL.Path, "/")
			mu.Lock()
			protos[r.ProtoMajor] = true
			if r.Method == http.MethodGet {
				reads[r.URL.RequestURI()]++
			}
			mu.Unlock()
			switch {
			case strings.HasPrefix(path, "/redfish/v1/Systems"):
				once.Do(func() { close(systems) })
			case path == "/redfish/v1/UpdateService/FirmwareInventory" && h2:
				// Answered once the System is asked for too, or after a
				// while when it is not (the reads do not overlap).
				select {
				case <-systems:
					mu.Lock()
					overlapped = true
					mu.Unlock()
				case <-time.After(10 * time.Second):
				}
			}
			return false
		}))
		srv, p := serveOver(t, m, h2)
		o := observeAll(t, p, providers.Target{Name: "s1", Endpoint: srv.URL, Updates: []providers.UpdateIntent{{Component: "BMC"}}})[0]
		if !o.Reachable {
			t.Fatalf("HTTP/2 %v: not observed: %v", h2, o.Diagnostics.Err())
		}
		mu.Lock()
		if h2 != protos[2] || h2 == protos[1] {
			t.Errorf("HTTP/2 %v: the BMC was asked over HTTP/%v", h2, protos)
		}
		if h2 && !overlapped {
			t.Errorf("HTTP/2: the inventory and System reads did not overlap")
		}
		for uri, n := range reads {
			if n > 1 {
				t.Errorf("HTTP/2 %v: %s read %d times, want once", h2, uri, n)
			}
		}
		mu.Unlock()
		if want == nil {
			want = o
		} else if diff := cmp.Diff(want, o); diff != "" {
			t.Errorf("the observation over HTTP/2 differs (-HTTP/1.1 +HTTP/2):\n%s", diff)
		}
	}
}

// TestSerialOnlyOverHTTP1 checks what makes a server's reads run one after
// another over HTTP/1.1, which the BMC cannot tell apart from reads queued
// on its one connection (MaxConnsPerHost 1): once connected, a BMC that
// answered over HTTP/1.1 is serial and one over HTTP/2 is not, and beside
// runs a serial read before it returns and any other in a goroutine.
func TestSerialOnlyOverHTTP1(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		m := newMockupServer(t, "dmtf/public-rackmount1")
		srv, p := serveOver(t, m, h2)
		b, release, err := p.acquire(providers.Target{Name: "s1", Endpoint: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if serial, connected := b.Serial(); serial || connected {
			t.Errorf("HTTP/2 %v: before the first read: serial %v, connected %v; want neither", h2, serial, connected)
		}
		if _, err := b.System(context.Background(), ""); err != nil {
			t.Fatal(err)
		}
		if serial, connected := b.Serial(); serial == h2 || !connected {
			t.Errorf("HTTP/2 %v: once connected: serial %v, connected %v; want serial %v", h2, serial, connected, !h2)
		}
		if d := release(context.Background()); d != nil {
			t.Errorf("HTTP/2 %v: logout: %s", h2, d.Detail)
		}
	}

	for _, serial := range []bool{true, false} {
		ran, inTurn := false, make(chan bool, 1)
		block := make(chan struct{})
		wait := beside(serial, func() {
			if !serial {
				<-block // returns only once beside has
			}
			ran = true
		})
		inTurn <- ran
		close(block)
		wait()
		if got := <-inTurn; got != serial {
			t.Errorf("beside(serial %v): the read had run when beside returned: %v", serial, got)
		}
		if !ran {
			t.Errorf("beside(serial %v): the read never ran", serial)
		}
	}
}

// serveOver serves m's tree over HTTP/2 when h2 (m itself answers over
// HTTP/1.1 only) and returns the server and a provider trusting it.
func serveOver(t *testing.T, m *mockupServer, h2 bool) (*httptest.Server, *Provider) {
	t.Helper()
	srv := m.Server.Server
	if h2 {
		srv = httptest.NewUnstartedServer(m.Config.Handler)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		t.Cleanup(srv.Close)
	}
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return srv, configure(t, Options{}, map[string]any{"ca_bundle": ca})
}
