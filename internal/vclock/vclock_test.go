package vclock

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

type report struct {
	name string
	at   time.Duration
}

// run is a coordinator like the executor's scheduler: it starts actors,
// settles, takes their messages in a canonical order, and advances.
func run(t *testing.T, c *Clock, actors map[string][]time.Duration, cancelAfter map[string]time.Duration) []report {
	t.Helper()
	msgs := make(chan report)
	cancels := map[string]context.CancelFunc{}
	for name, steps := range actors {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[name] = cancel
		c.Start()
		go func() {
			defer c.Done()
			for _, d := range steps {
				if err := c.SleepFor(ctx, d); err != nil {
					c.Park()
					msgs <- report{name + " cancelled", c.Now().Sub(t0)}
					return
				}
				c.Park()
				msgs <- report{name, c.Now().Sub(t0)}
			}
		}()
	}
	var got []report
	for range 1000 {
		c.Settle()
		if n := c.Parked(); n > 0 {
			c.Unpark(n)
			batch := make([]report, 0, n)
			for range n {
				batch = append(batch, <-msgs)
			}
			slices.SortFunc(batch, func(a, b report) int {
				if a.name < b.name {
					return -1
				}
				return 1
			})
			got = append(got, batch...)
			for name, after := range cancelAfter {
				if c.Now().Sub(t0) >= after && cancels[name] != nil {
					cancels[name]()
					cancels[name] = nil
				}
			}
			continue
		}
		next, ok := c.Next()
		if !ok {
			return got
		}
		c.AdvanceTo(next)
	}
	t.Fatal("the coordinator did not finish")
	return nil
}

func TestActorsOverlapInVirtualTime(t *testing.T) {
	c := New(t0)
	start := time.Now()
	got := run(t, c, map[string][]time.Duration{
		"a": {10 * time.Minute, 5 * time.Minute},
		"b": {15 * time.Minute},
		"c": {time.Hour},
	}, nil)
	want := []report{{"a", 10 * time.Minute}, {"a", 15 * time.Minute}, {"b", 15 * time.Minute}, {"c", time.Hour}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if c.Now() != t0.Add(time.Hour) {
		t.Errorf("clock at %v", c.Now())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("an hour of virtual time took %v", el)
	}
}

// A context the coordinator cancels wakes its sleeper before time moves:
// b is cancelled at 10m and reports at 10m, not at its 2h timer.
func TestCancelWakesBeforeTimeMoves(t *testing.T) {
	for range 50 { // the race this guards against is a goroutine not yet run
		c := New(t0)
		got := run(t, c, map[string][]time.Duration{
			"a": {10 * time.Minute, time.Hour},
			"b": {2 * time.Hour},
		}, map[string]time.Duration{"b": 10 * time.Minute})
		want := []report{{"a", 10 * time.Minute}, {"b cancelled", 10 * time.Minute}, {"a", 70 * time.Minute}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestTimersAndSkip(t *testing.T) {
	c := New(t0)
	ch := c.At(t0.Add(time.Minute))
	if next, ok := c.Next(); !ok || next != t0.Add(time.Minute) {
		t.Fatalf("Next %v %v", next, ok)
	}
	c.SkipTo(t0.Add(2 * time.Minute))
	select {
	case got := <-ch:
		if got != t0.Add(2*time.Minute) {
			t.Errorf("fired at %v", got)
		}
	default:
		t.Fatal("the timer did not fire")
	}
	c.SkipTo(t0) // never back
	if c.Now() != t0.Add(2*time.Minute) {
		t.Errorf("clock went back to %v", c.Now())
	}
	if _, ok := c.Next(); ok {
		t.Error("nothing should wait")
	}
}

func TestMiscountPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Done without Start did not panic")
		}
	}()
	New(t0).Done()
}
