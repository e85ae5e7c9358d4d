package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMaintenanceWindow(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	once := &MaintenanceWindow{Name: "once", Start: at("2026-07-01T22:00:00Z"), Duration: 4 * time.Hour, Recurrence: RecurNone, Location: time.UTC}
	// 22:00 Berlin daily: 20:00Z in summer (CEST), 21:00Z in winter (CET).
	daily := &MaintenanceWindow{Name: "daily", Start: at("2026-03-27T22:00:00+01:00").In(berlin), Duration: 2 * time.Hour, Recurrence: RecurDaily, Location: berlin}
	weekly := &MaintenanceWindow{Name: "weekly", Start: at("2026-07-05T01:00:00Z"), Duration: 8 * time.Hour, Recurrence: RecurWeekly, Location: time.UTC}

	tests := []struct {
		name     string
		w        *MaintenanceWindow
		now      string
		want     WindowState
		priority WindowPriority
	}{
		{"before a one-off window, far", once, "2026-07-01T10:00:00Z",
			WindowState{OpensAt: at("2026-07-01T22:00:00Z"), ClosesAt: at("2026-07-02T02:00:00Z")}, WindowClosed},
		{"before a one-off window, within 4h", once, "2026-07-01T18:00:00Z",
			WindowState{OpensAt: at("2026-07-01T22:00:00Z"), ClosesAt: at("2026-07-02T02:00:00Z")}, WindowOpeningSoon},
		{"inside a one-off window", once, "2026-07-02T01:59:59Z",
			WindowState{Open: true, OpensAt: at("2026-07-01T22:00:00Z"), ClosesAt: at("2026-07-02T02:00:00Z")}, WindowOpenNow},
		{"closing instant is closed", once, "2026-07-02T02:00:00Z", WindowState{}, WindowClosed},
		{"after a one-off window", once, "2026-08-01T00:00:00Z", WindowState{}, WindowClosed},
		{"daily, open before DST change", daily, "2026-03-27T21:30:00Z",
			WindowState{Open: true, OpensAt: at("2026-03-27T21:00:00Z"), ClosesAt: at("2026-03-27T23:00:00Z")}, WindowOpenNow},
		{"daily keeps wall clock across DST", daily, "2026-03-30T12:00:00Z",
			WindowState{OpensAt: at("2026-03-30T20:00:00Z"), ClosesAt: at("2026-03-30T22:00:00Z")}, WindowClosed},
		{"daily, just after midnight inside", daily, "2026-07-10T21:30:00Z",
			WindowState{Open: true, OpensAt: at("2026-07-10T20:00:00Z"), ClosesAt: at("2026-07-10T22:00:00Z")}, WindowOpenNow},
		{"weekly, next week soon", weekly, "2026-07-18T22:00:00Z",
			WindowState{OpensAt: at("2026-07-19T01:00:00Z"), ClosesAt: at("2026-07-19T09:00:00Z")}, WindowOpeningSoon},
		{"weekly, open", weekly, "2026-07-12T08:00:00Z",
			WindowState{Open: true, OpensAt: at("2026-07-12T01:00:00Z"), ClosesAt: at("2026-07-12T09:00:00Z")}, WindowOpenNow},
		{"weekly, before first start", weekly, "2026-06-01T00:00:00Z",
			WindowState{OpensAt: at("2026-07-05T01:00:00Z"), ClosesAt: at("2026-07-05T09:00:00Z")}, WindowClosed},
	}
	eqTime := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := at(tt.now)
			if diff := cmp.Diff(tt.want, tt.w.At(now), eqTime); diff != "" {
				t.Errorf("At(%s) (-want +got):\n%s", tt.now, diff)
			}
			if got := tt.w.Priority(now); got != tt.priority {
				t.Errorf("Priority(%s) = %s, want %s", tt.now, got, tt.priority)
			}
		})
	}
	var none *MaintenanceWindow
	if none.Priority(time.Now()) != WindowNone {
		t.Errorf("nil window priority is not WindowNone")
	}
}

func TestWindowFromConfig(t *testing.T) {
	cfg := load(t, `maintenance_window "w" {
  start      = "2026-07-06T22:00:00+02:00"
  duration   = "6h"
  recurrence = "daily"
  timezone   = "Europe/Berlin"
}`)
	w := cfg.MaintenanceWindow("w")
	if w.Location.String() != "Europe/Berlin" || w.Duration != 6*time.Hour || w.Recurrence != RecurDaily {
		t.Fatalf("window = %+v", w)
	}
	now, _ := time.Parse(time.RFC3339, "2026-07-08T21:00:00Z") // 23:00 in Berlin
	if st := w.At(now); !st.Open {
		t.Errorf("At(%s) = %+v, want open", now, st)
	}
}
