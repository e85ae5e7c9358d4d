// Package profiling writes CPU and heap profiles of a rackform process
// where it runs: the CLI (RACKFORM_CPUPROFILE, RACKFORM_HEAPPROFILE) and a
// provider plugin (RACKFORM_PLUGIN_CPUPROFILE, RACKFORM_PLUGIN_HEAPPROFILE).
package profiling

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// heapSampleInterval is how often the heap profile is considered.
const heapSampleInterval = 250 * time.Millisecond

// Start starts the CPU profile into cpuPath and samples the heap
// into heapPath (kept when the heap in use is the largest seen), and
// returns what stops them and writes the files; nil when neither is asked.
// At the stop the heap is also written to heapPath+".end": its allocations
// (-sample_index=alloc_space) are the whole run's, where the largest
// heap's are those up to that moment.
func Start(cpuPath, heapPath string, logger hclog.Logger) func() {
	if cpuPath == "" && heapPath == "" {
		return nil
	}
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			logger.Error("cannot profile CPU", "file", cpuPath, "error", err)
		} else {
			cpu = f
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var largest uint64
	writeHeap := func(path string) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse <= largest && path == heapPath {
			return
		}
		largest = max(largest, ms.HeapInuse)
		f, err := os.Create(path)
		if err != nil {
			logger.Error("cannot write the heap profile", "file", heapPath, "error", err)
			return
		}
		defer f.Close()
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		_ = os.WriteFile(path+".txt", fmt.Appendf(nil, "heap in use %d MB, stacks %d MB, sys %d MB, %d goroutines, %d collections at %s\n", ms.HeapInuse>>20, ms.StackInuse>>20, ms.Sys>>20, runtime.NumGoroutine(), ms.NumGC, time.Now().Format(time.RFC3339)), 0o644)
	}
	if heapPath != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(heapSampleInterval)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					writeHeap(heapPath)
				}
			}
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			if heapPath != "" {
				writeHeap(heapPath + ".end")
			}
			if cpu != nil {
				pprof.StopCPUProfile()
				cpu.Close()
			}
		})
	}
}
