package backendtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rackform/rackform/executor"
)

// RunClaimer runs the conformance tests of executor.Claimer (several
// workers on one run) against a backend that implements it. Handles of one
// Store are workers on different machines.
func RunClaimer(t *testing.T, newStore Factory) {
	ctx := context.Background()
	join := func(t *testing.T, s Store, id string) (executor.Backend, executor.Claimer) {
		t.Helper()
		b := s(t)
		c, ok := b.(executor.Claimer)
		if !ok {
			t.Fatalf("%T does not implement executor.Claimer", b)
		}
		must(t, c.Join(ctx, executor.WorkerInfo{ID: id, Who: "ci@" + id, PID: 1, PlanSHA256: shaA}))
		return b, c
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"a unit is held by one worker at a time, up to each worker's share", func(t *testing.T, s Store) {
			_, a := join(t, s, "w-a")
			_, b := join(t, s, "w-b")
			units := []string{"g1", "g2", "g3"}
			held, _, err := a.Claim(ctx, shaA, units, 2)
			must(t, err)
			if !slices.Equal(held, []string{"g1", "g2"}) {
				t.Fatalf("worker a holds %v, want g1 g2 (its share of 2, in order)", held)
			}
			held, _, err = b.Claim(ctx, shaA, units, 2)
			must(t, err)
			if !slices.Equal(held, []string{"g3"}) {
				t.Fatalf("worker b holds %v, want only g3: g1 and g2 are held by a live worker", held)
			}
			claims, live, err := b.Claims(ctx, shaA)
			must(t, err)
			if live != 2 || claims["g1"] != "w-a" || claims["g3"] != "w-b" {
				t.Fatalf("Claims = %v, %d live; want g1, g2 by w-a, g3 by w-b, 2 live", claims, live)
			}
			ws, err := a.Workers(ctx, shaA)
			must(t, err)
			if len(ws) != 2 || ws[0].ID != "w-a" || ws[0].Who != "ci@w-a" || !slices.Equal(ws[0].Units, []string{"g1", "g2"}) ||
				ws[1].ID != "w-b" || !slices.Equal(ws[1].Units, []string{"g3"}) || ws[1].LeaseExpires.IsZero() {
				t.Fatalf("Workers = %+v; want w-a (joined first) holding g1 g2, then w-b holding g3, with their leases", ws)
			}
			if ws, err := a.Workers(ctx, shaB); err != nil || len(ws) != 0 {
				t.Fatalf("Workers of another plan = %+v, %v; want none", ws, err)
			}
		}},
		{"a released unit, or one of a worker that left, is free for another", func(t *testing.T, s Store) {
			_, a := join(t, s, "w-a")
			_, b := join(t, s, "w-b")
			_, _, err := a.Claim(ctx, shaA, []string{"g1", "g2"}, 2)
			must(t, err)
			must(t, a.Release(ctx, shaA, []string{"g1"}))
			held, _, err := b.Claim(ctx, shaA, []string{"g1", "g2"}, 2)
			must(t, err)
			if !slices.Equal(held, []string{"g1"}) {
				t.Fatalf("after a released g1, b holds %v, want g1", held)
			}
			must(t, a.Leave(ctx))
			held, adopted, err := b.Claim(ctx, shaA, []string{"g1", "g2"}, 2)
			must(t, err)
			if !slices.Equal(held, []string{"g1", "g2"}) || len(adopted) != 0 {
				t.Fatalf("after a left, b holds %v (adopted %v), want g1 g2, none adopted (a left cleanly)", held, adopted)
			}
		}},
		{"workers claiming at once never hold a unit twice", func(t *testing.T, s Store) {
			var units []string
			for i := range 12 {
				units = append(units, fmt.Sprintf("g%02d", i))
			}
			var mu sync.Mutex
			owner := map[string]string{}
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			cs := make([]executor.Claimer, 4)
			for w := range cs {
				_, cs[w] = join(t, s, fmt.Sprintf("w-%d", w))
			}
			for w, c := range cs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					held, _, err := c.Claim(ctx, shaA, units, 3)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					defer mu.Unlock()
					for _, u := range held {
						if o := owner[u]; o != "" {
							errs <- fmt.Errorf("unit %s held by worker %s and worker %d", u, o, w)
						}
						owner[u] = fmt.Sprint(w)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if len(owner) != len(units) {
				t.Errorf("%d of %d units claimed by four workers with a share of 3 each: %v", len(owner), len(units), owner)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}
