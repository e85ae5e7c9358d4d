package state

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/rackform/rackform/executor"
)

// A journal longer than a block is held compressed and read back whole,
// from any position, as a journal file would be: the same records, the
// same positions, through Read and through Scan.
func TestMemoryJournalAcrossBlocks(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	const sha = "0123456789abcdef"
	var want []executor.Entry
	var file []byte
	for i := 0; len(file) < 3*memBlockSize+1000; i++ {
		r := fmt.Appendf(nil, `{"v":1,"type":"step_started","server":"c%03d/r%02d/s%02d","op":"step:%d"}`, i/1000, i/40%25, i%40, i%8+1)
		pos, err := m.Append(ctx, sha, r)
		if err != nil {
			t.Fatal(err)
		}
		file = append(append(file, r...), '\n')
		if pos[0] != int64(len(file)) {
			t.Fatalf("record %d at position %d, want %d", i, pos[0], len(file))
		}
		want = append(want, executor.Entry{Pos: pos[0], Data: r})
	}
	j := m.journals[sha]
	if len(j.sealed) < 3 {
		t.Fatalf("%d bytes of records sealed %d blocks, want 3", len(file), len(j.sealed))
	}
	held := len(j.open)
	for _, b := range j.sealed {
		held += len(b.data)
	}
	if held*4 > len(file) {
		t.Errorf("%d bytes of records held in %d bytes", len(file), held)
	}
	for _, after := range []int64{-1, 0, want[0].Pos, want[len(want)/2].Pos, j.sealed[1].end, j.sealed[1].end - 1, want[len(want)-2].Pos, want[len(want)-1].Pos} {
		var exp []executor.Entry
		for _, en := range want {
			if en.Pos > after {
				exp = append(exp, en)
			}
		}
		got, err := m.Read(ctx, sha, after)
		if err != nil {
			t.Fatal(err)
		}
		var scanned []executor.Entry
		err = m.Scan(ctx, sha, after, func(en executor.Entry) error {
			scanned = append(scanned, executor.Entry{Pos: en.Pos, Data: bytes.Clone(en.Data)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range map[string][]executor.Entry{"Read": got, "Scan": scanned} {
			if len(g) != len(exp) {
				t.Fatalf("%s after %d: %d records, want %d", name, after, len(g), len(exp))
			}
			for i := range g {
				if g[i].Pos != exp[i].Pos || !bytes.Equal(g[i].Data, exp[i].Data) {
					t.Fatalf("%s after %d: record %d is %d %s, want %d %s", name, after, i, g[i].Pos, g[i].Data, exp[i].Pos, exp[i].Data)
				}
			}
		}
	}
}
