package state_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rackform/rackform/executor/state"
)

var benchRecord = []byte(`{"v":1,"type":"state","t":"2026-11-25T22:00:00.123456Z","id":"stage.prod.group.main.cluster.lab.phase.compute.rack.r1.server.s1","state":"running","message":"step 2/3: BIOS 2.70 -> 2.80 (simple_update)"}`)

// BenchmarkDirAppend measures the local journal write per step: one Append
// of one record (file lock, write, fsync), to compare with the PostgreSQL
// backend's BenchmarkAppend.
func BenchmarkDirAppend(b *testing.B) {
	d, err := state.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	sha := strings.Repeat("e", 64)
	for b.Loop() {
		if _, err := d.Append(ctx, sha, benchRecord); err != nil {
			b.Fatal(err)
		}
	}
}
