package state_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
)

const sha = "abcdef0123456789"

func backends(t *testing.T) map[string]func() executor.Backend {
	dir := t.TempDir()
	return map[string]func() executor.Backend{
		"dir": func() executor.Backend {
			d, err := state.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			return d
		},
		"memory": func() executor.Backend { m := state.NewMemory(); return m },
	}
}

func TestAppendReadPositions(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			b := open()
			pos, err := b.Append(ctx, sha, []byte(`{"a":1}`), []byte(`{"b":2}`))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{8, 16}, pos); diff != "" {
				t.Error(diff)
			}
			pos2, _ := b.Append(ctx, sha, []byte(`{"c":3}`))
			all, _ := b.Read(ctx, sha, -1)
			after, _ := b.Read(ctx, sha, pos[1])
			var got []string
			for _, e := range all {
				got = append(got, fmt.Sprintf("%d:%s", e.Pos, e.Data))
			}
			if diff := cmp.Diff([]string{`8:{"a":1}`, `16:{"b":2}`, `24:{"c":3}`}, got); diff != "" {
				t.Error(diff)
			}
			if len(after) != 1 || after[0].Pos != pos2[0] {
				t.Errorf("Read after %d = %v", pos[1], after)
			}
			if _, err := b.Append(ctx, sha, []byte("two\nlines")); err == nil {
				t.Error("a record with a newline was accepted")
			}
			if e, _ := b.Read(ctx, "ffffffffffffffff", -1); len(e) != 0 {
				t.Errorf("unknown journal has %d records", len(e))
			}
		})
	}
}

func TestPlans(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			b := open()
			if _, err := b.CurrentPlan(ctx); !errors.Is(err, executor.ErrNotFound) {
				t.Errorf("CurrentPlan on empty state: %v", err)
			}
			if _, err := b.LoadPlan(ctx, sha); !errors.Is(err, executor.ErrNotFound) {
				t.Errorf("LoadPlan of unknown plan: %v", err)
			}
			b.SavePlan(ctx, sha, []byte("plan one"))
			b.SavePlan(ctx, "0123456789abcdef", []byte("plan two"))
			cur, _ := b.CurrentPlan(ctx)
			got, _ := b.LoadPlan(ctx, sha)
			if cur != "0123456789abcdef" || string(got) != "plan one" {
				t.Errorf("current %q, plan %q", cur, got)
			}
		})
	}
}

func TestDirRefusesPathLikeSHA(t *testing.T) {
	d, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Append(context.Background(), "../../etc/passwd", []byte("{}")); err == nil {
		t.Error("a path-like SHA was accepted")
	}
}

// Two handles on one directory behave like two processes: appends never
// interleave within a line.
func TestDirConcurrentAppendsFromTwoHandles(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		d, err := state.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				rec := bytes.Repeat([]byte{byte('a' + w)}, 100+i)
				if _, err := d.Append(context.Background(), sha, rec); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	d, _ := state.Open(dir)
	defer d.Close()
	all, _ := d.Read(context.Background(), sha, -1)
	if len(all) != 100 {
		t.Fatalf("%d records, want 100", len(all))
	}
	for _, e := range all {
		if len(bytes.Trim(e.Data, string(e.Data[:1]))) != 0 {
			t.Fatalf("interleaved record %q", e.Data)
		}
	}
}

func TestDirTornTail(t *testing.T) {
	dir := t.TempDir()
	d, _ := state.Open(dir)
	defer d.Close()
	ctx := context.Background()
	d.Append(ctx, sha, []byte(`{"a":1}`))
	f, _ := os.OpenFile(filepath.Join(dir, "journal", sha+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"half`)
	f.Close()
	if all, _ := d.Read(ctx, sha, -1); len(all) != 1 {
		t.Errorf("torn line returned: %d records", len(all))
	}
	pos, err := d.Append(ctx, sha, []byte(`{"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "journal", sha+".jsonl"))
	if string(b) != "{\"a\":1}\n{\"b\":2}\n" || pos[0] != int64(len(b)) {
		t.Errorf("journal after repair = %q, pos %v", b, pos)
	}
}

func TestLockFile(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			b := open()
			a := executor.LockInfo{ID: "one", Who: "a@h", PID: 1, PlanSHA256: sha}
			if err := b.Lock(ctx, a); err != nil {
				t.Fatal(err)
			}
			var le *executor.LockedError
			if err := b.Lock(ctx, executor.LockInfo{ID: "two"}); !errors.As(err, &le) || le.Holder.ID != "one" || le.Holder.Who != "a@h" {
				t.Fatalf("second lock: %v", err)
			}
			if err := b.Unlock(ctx, "two"); err == nil {
				t.Error("unlock with another ID succeeded")
			}
			if err := b.Unlock(ctx, "one"); err != nil {
				t.Fatal(err)
			}
			if err := b.Lock(ctx, executor.LockInfo{ID: "two"}); err != nil {
				t.Errorf("lock after unlock: %v", err)
			}
		})
	}
}

// A lock file that cannot be read still locks; it is removed only by the
// ID of exactly its bytes.
func TestCorruptLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, raw := range []string{`{"id":"ab`, `{}`, "\x00\x00\x00"} {
		if err := os.WriteFile(filepath.Join(dir, "lock.json"), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := d.LockHolder(ctx)
		var corrupt *executor.CorruptLockError
		if !errors.As(err, &corrupt) || string(corrupt.Raw) != raw {
			t.Fatalf("%q: LockHolder = %v, want a CorruptLockError", raw, err)
		}
		if err := d.Lock(ctx, executor.LockInfo{ID: "new", Who: "a@b", PID: 1}); !errors.As(err, &corrupt) {
			t.Fatalf("%q: Lock = %v, want refused as corrupt", raw, err)
		}
		if err := executor.ForceUnlock(ctx, d, "ab"); err == nil || !errors.As(err, &corrupt) {
			t.Fatalf("%q: ForceUnlock with another ID = %v", raw, err)
		}
		if err := executor.ForceUnlock(ctx, d, corrupt.ID()); err != nil {
			t.Fatalf("%q: ForceUnlock %s: %v", raw, corrupt.ID(), err)
		}
		if _, err := d.LockHolder(ctx); !errors.Is(err, executor.ErrNotFound) {
			t.Fatalf("%q: after force-unlock: %v", raw, err)
		}
	}
}
