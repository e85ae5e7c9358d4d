package state_test

import (
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/backendtest"
	"github.com/rackform/rackform/executor/state"
)

// TestDirConformance: the local state directory gives the guarantees every
// backend gives (executor/backendtest); two handles are two Opens of one
// directory, as two processes on one machine.
func TestDirConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backendtest.Store {
		dir := t.TempDir()
		return func(t *testing.T) executor.Backend {
			d, err := state.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			return d
		}
	})
}

// TestMemoryConformance: the in-memory backend of the engine's tests
// behaves as the real ones; its handles share one Memory.
func TestMemoryConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backendtest.Store {
		m := state.NewMemory()
		return func(*testing.T) executor.Backend { return m }
	})
}
