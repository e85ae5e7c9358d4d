// Package backendtest is the conformance suite of executor.Backend: every
// state backend (state.Memory, state.Dir, postgres) runs the same table of
// tests, so the engine may rely on the same guarantees from each.
package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
)

// Store opens handles on one store: two handles from the same Store see
// the same plans, journals and lock, like two processes (or two machines)
// sharing a state directory or a database. Handles are closed by the test's
// cleanup.
type Store func(t *testing.T) executor.Backend

// Factory returns a fresh, empty store for each test.
type Factory func(t *testing.T) Store

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func rec(s string) []byte { return []byte(`{"t":"` + s + `"}`) }

// Run runs the conformance tests against the backends newStore makes.
func Run(t *testing.T, newStore Factory) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"a store without plans has no current plan and loads none", func(t *testing.T, s Store) {
			b := s(t)
			if _, err := b.CurrentPlan(ctx); !errors.Is(err, executor.ErrNotFound) {
				t.Fatalf("CurrentPlan on an empty store: %v, want ErrNotFound", err)
			}
			if _, err := b.LoadPlan(ctx, shaA); !errors.Is(err, executor.ErrNotFound) {
				t.Fatalf("LoadPlan of an unknown plan: %v, want ErrNotFound", err)
			}
		}},
		{"a saved plan loads byte for byte and the plan saved last is current, from another handle too", func(t *testing.T, s Store) {
			a, b := s(t), s(t)
			must(t, a.SavePlan(ctx, shaA, []byte("plan A\x00bytes")))
			must(t, a.SavePlan(ctx, shaB, []byte("plan B")))
			got, err := b.LoadPlan(ctx, shaA)
			must(t, err)
			if !bytes.Equal(got, []byte("plan A\x00bytes")) {
				t.Fatalf("LoadPlan = %q", got)
			}
			if cur, err := b.CurrentPlan(ctx); err != nil || cur != shaB {
				t.Fatalf("CurrentPlan = %q, %v; want plan B, saved last", cur, err)
			}
			// Saving A again (apply of it resumed) makes it current again.
			must(t, b.SavePlan(ctx, shaA, []byte("plan A\x00bytes")))
			if cur, err := a.CurrentPlan(ctx); err != nil || cur != shaA {
				t.Fatalf("CurrentPlan after saving A again = %q, %v; want A", cur, err)
			}
		}},
		{"appended records read back in order with growing positions, from another handle", func(t *testing.T, s Store) {
			a, b := s(t), s(t)
			if es, err := b.Read(ctx, shaA, -1); err != nil || len(es) != 0 {
				t.Fatalf("Read of an empty journal = %v, %v; want nothing", es, err)
			}
			p1, err := a.Append(ctx, shaA, rec("1"))
			must(t, err)
			p2, err := a.Append(ctx, shaA, rec("2"), rec("3"), rec("4"))
			must(t, err)
			if len(p1) != 1 || len(p2) != 3 {
				t.Fatalf("positions %v %v: want one per record", p1, p2)
			}
			all := append(p1, p2...)
			for i := 1; i < len(all); i++ {
				if all[i] <= all[i-1] {
					t.Fatalf("positions %v do not grow with append order", all)
				}
			}
			es, err := b.Read(ctx, shaA, -1)
			must(t, err)
			checkEntries(t, es, all, "1", "2", "3", "4")
			es, err = b.Read(ctx, shaA, p1[0])
			must(t, err)
			checkEntries(t, es, p2, "2", "3", "4")
			es, err = b.Read(ctx, shaA, all[len(all)-1])
			must(t, err)
			if len(es) != 0 {
				t.Fatalf("Read after the last position = %d records, want none", len(es))
			}
		}},
		{"each plan has its own journal", func(t *testing.T, s Store) {
			b := s(t)
			_, err := b.Append(ctx, shaA, rec("a1"))
			must(t, err)
			pb, err := b.Append(ctx, shaB, rec("b1"))
			must(t, err)
			_, err = b.Append(ctx, shaA, rec("a2"))
			must(t, err)
			es, err := b.Read(ctx, shaB, -1)
			must(t, err)
			checkEntries(t, es, pb, "b1")
			es, err = b.Read(ctx, shaA, -1)
			must(t, err)
			if len(es) != 2 || !strings.Contains(string(es[0].Data), "a1") || !strings.Contains(string(es[1].Data), "a2") {
				t.Fatalf("journal A = %s, want a1, a2", dump(es))
			}
		}},
		{"a record of several lines is refused and nothing is written", func(t *testing.T, s Store) {
			b := s(t)
			if _, err := b.Append(ctx, shaA, rec("ok"), []byte("{\n}")); err == nil {
				t.Fatal("Append of a record with a newline succeeded")
			}
			es, err := b.Read(ctx, shaA, -1)
			must(t, err)
			if len(es) != 0 {
				t.Fatalf("a refused Append wrote %s", dump(es))
			}
		}},
		{"appends of several handles at once are serialised: every record once, each writer's in its order", func(t *testing.T, s Store) {
			const writers, each = 4, 15
			hs := make([]executor.Backend, writers)
			for i := range hs {
				hs[i] = s(t)
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if _, err := hs[w].Append(ctx, shaA, rec(fmt.Sprintf("w%d-%02d", w, i))); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			es, err := hs[0].Read(ctx, shaA, -1)
			must(t, err)
			if len(es) != writers*each {
				t.Fatalf("%d records, want %d", len(es), writers*each)
			}
			next := make([]int, writers)
			for i, e := range es {
				if i > 0 && e.Pos <= es[i-1].Pos {
					t.Fatalf("positions not increasing at %d", i)
				}
				var w, n int
				if _, err := fmt.Sscanf(string(e.Data), `{"t":"w%d-%d"}`, &w, &n); err != nil {
					t.Fatalf("record %q: %v", e.Data, err)
				}
				if n != next[w] {
					t.Fatalf("writer %d: record %d read where %d was expected (lost, repeated or reordered)", w, n, next[w])
				}
				next[w]++
			}
		}},
		{"a reader following the journal by position misses nothing appended concurrently", func(t *testing.T, s Store) {
			w, r := s(t), s(t)
			const total = 40
			done := make(chan error, 1)
			go func() {
				for i := range total {
					if _, err := w.Append(ctx, shaA, rec(fmt.Sprintf("%02d", i))); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			var seen []executor.Entry
			cursor := int64(-1)
			deadline := time.Now().Add(30 * time.Second)
			for len(seen) < total && time.Now().Before(deadline) {
				es, err := r.Read(ctx, shaA, cursor)
				must(t, err)
				for _, e := range es {
					cursor = e.Pos
					seen = append(seen, e)
				}
			}
			must(t, <-done)
			for i, e := range seen {
				if want := fmt.Sprintf(`{"t":"%02d"}`, i); string(e.Data) != want {
					t.Fatalf("record %d read by position = %s, want %s", i, e.Data, want)
				}
			}
			if len(seen) != total {
				t.Fatalf("the reader saw %d of %d records", len(seen), total)
			}
		}},
		{"the lock is exclusive across handles and names its holder", func(t *testing.T, s Store) {
			a, b := s(t), s(t)
			if _, err := a.LockHolder(ctx); !errors.Is(err, executor.ErrNotFound) {
				t.Fatalf("LockHolder of an unlocked store: %v, want ErrNotFound", err)
			}
			info := executor.LockInfo{ID: "id-1", Who: "ci@runner-a", PID: 4242, PlanSHA256: shaA, Since: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
			must(t, a.Lock(ctx, info))
			err := b.Lock(ctx, executor.LockInfo{ID: "id-2", Who: "ci@runner-b", PID: 1, PlanSHA256: shaA, Since: time.Now()})
			var le *executor.LockedError
			if !errors.As(err, &le) {
				t.Fatalf("second Lock: %v, want a LockedError", err)
			}
			h := le.Holder
			if h.ID != info.ID || h.Who != info.Who || h.PID != info.PID || h.PlanSHA256 != shaA || !h.Since.Equal(info.Since) {
				t.Fatalf("LockedError holder = %+v, want %+v", h, info)
			}
			if !strings.Contains(le.Error(), executor.NextAction{Kind: executor.NextForceUnlock, Target: "id-1"}.Ref()) {
				t.Fatalf("LockedError does not say how to force-unlock: %s", le)
			}
			got, err := b.LockHolder(ctx)
			must(t, err)
			if got.ID != info.ID || got.Who != info.Who {
				t.Fatalf("LockHolder = %+v", got)
			}
		}},
		{"unlock by another ID is refused and leaves the lock; by its ID releases it", func(t *testing.T, s Store) {
			a, b := s(t), s(t)
			must(t, a.Lock(ctx, executor.LockInfo{ID: "id-1", Who: "x@y", PID: 1, PlanSHA256: shaA, Since: time.Now()}))
			if err := b.Unlock(ctx, "id-9"); err == nil {
				t.Fatal("Unlock with a wrong ID succeeded")
			}
			if _, err := b.LockHolder(ctx); err != nil {
				t.Fatalf("after a refused Unlock: %v", err)
			}
			must(t, a.Unlock(ctx, "id-1"))
			if _, err := b.LockHolder(ctx); !errors.Is(err, executor.ErrNotFound) {
				t.Fatalf("after Unlock: %v, want ErrNotFound", err)
			}
			if err := a.Unlock(ctx, "id-1"); !errors.Is(err, executor.ErrNotFound) {
				t.Fatalf("Unlock of no lock: %v, want ErrNotFound", err)
			}
			must(t, b.Lock(ctx, executor.LockInfo{ID: "id-2", Who: "x@z", PID: 2, PlanSHA256: shaA, Since: time.Now()}))
		}},
		{"force-unlock from another handle removes the lock by its ID only", func(t *testing.T, s Store) {
			a, b := s(t), s(t)
			must(t, a.Lock(ctx, executor.LockInfo{ID: "id-1", Who: "x@y", PID: 1, PlanSHA256: shaA, Since: time.Now()}))
			if err := executor.ForceUnlock(ctx, b, "id-2"); err == nil || !strings.Contains(err.Error(), "id-1") {
				t.Fatalf("ForceUnlock with a wrong ID: %v, want a refusal naming id-1", err)
			}
			must(t, executor.ForceUnlock(ctx, b, "id-1"))
			if err := executor.ForceUnlock(ctx, b, "id-1"); err == nil || !strings.Contains(err.Error(), "not locked") {
				t.Fatalf("ForceUnlock of no lock: %v", err)
			}
			must(t, b.Lock(ctx, executor.LockInfo{ID: "id-3", Who: "x@z", PID: 2, PlanSHA256: shaA, Since: time.Now()}))
		}},
		{"records survive closing every handle (durable when Append returns)", func(t *testing.T, s Store) {
			a := s(t)
			must(t, a.SavePlan(ctx, shaA, []byte("plan")))
			pos, err := a.Append(ctx, shaA, rec("kept"))
			must(t, err)
			if c, ok := a.(interface{ Close() error }); ok {
				must(t, c.Close())
			}
			b := s(t)
			es, err := b.Read(ctx, shaA, -1)
			must(t, err)
			checkEntries(t, es, pos, "kept")
			if cur, err := b.CurrentPlan(ctx); err != nil || cur != shaA {
				t.Fatalf("CurrentPlan after reopening = %q, %v", cur, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func checkEntries(t *testing.T, es []executor.Entry, pos []int64, want ...string) {
	t.Helper()
	if len(es) != len(want) {
		t.Fatalf("read %s, want %d records %v", dump(es), len(want), want)
	}
	for i, e := range es {
		if string(e.Data) != string(rec(want[i])) || e.Pos != pos[i] {
			t.Fatalf("record %d = %s at %d, want %s at %d", i, e.Data, e.Pos, rec(want[i]), pos[i])
		}
	}
}

func dump(es []executor.Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "[%d %s]", e.Pos, e.Data)
	}
	return b.String()
}
