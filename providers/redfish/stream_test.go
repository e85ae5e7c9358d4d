package redfish

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rackform/rackform/providers"
)

// TestPushStreamsImage: a push streams the image, verified by SHA-256
// first, without holding it in memory: pushing a 64 MiB image allocates a
// small fraction of its size, for multipart and raw pushes alike.
func TestPushStreamsImage(t *testing.T) {
	const size = 64 << 20
	file := filepath.Join(t.TempDir(), "bmc-big.bin")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // zeros, without writing them
		t.Fatal(err)
	}
	f.Close()
	zeros := sumZeros(t, size)
	for _, method := range []string{providers.MethodMultipartPush, providers.MethodHTTPPush} {
		t.Run(method, func(t *testing.T) {
			var got atomic.Int64
			m := newMockupServer(t, "csm/OpenBMC-stock", intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/UpdateService/update") {
					return false
				}
				n, _ := io.Copy(io.Discard, r.Body)
				got.Store(n)
				w.WriteHeader(http.StatusNoContent)
				return true
			}))
			p := fastConfig(t, m)
			target := providers.Target{Name: "s", Endpoint: m.URL}
			in := providers.UpdateIntent{Component: "bmc", Match: providers.Match{ID: "5d0869c4"}, ImageURI: file, Method: method}
			step := stepFrom(planFor(t, p, target, in), in)
			step.SHA256 = zeros
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if _, d := apply(t, p, target, step); d.HasErrors() {
				t.Fatalf("push: %v", d.Err())
			}
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s of %d MiB: %d KiB allocated (client and test server together)", method, size>>20, alloc>>10)
			if got.Load() < size {
				t.Fatalf("the BMC got %d bytes, want at least %d", got.Load(), size)
			}
			if alloc > size/4 {
				t.Errorf("pushing %d MiB allocated %d MiB: the image is buffered, not streamed", size>>20, alloc>>20)
			}
		})
	}
}

func sumZeros(t *testing.T, n int) string {
	t.Helper()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(buf) {
		h.Write(buf[:min(len(buf), left)])
	}
	return hex.EncodeToString(h.Sum(nil))
}
