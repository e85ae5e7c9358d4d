package main

import "testing"

// The collector's pace lets the heap grow to 2× what is live while that
// stays under the budget, then to the budget, and never collects less
// often than at 1.5× what is live.
func TestGCPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live, budget uint64
		want         int
	}{
		{0, 448 * mb, 50}, // nothing measured yet
		{1 * mb, 448 * mb, 100},
		{224 * mb, 448 * mb, 100},
		{256 * mb, 448 * mb, 75}, // to the budget
		{300 * mb, 448 * mb, 50}, // 1.5× is more than the budget
		{448 * mb, 448 * mb, 50},
		{900 * mb, 448 * mb, 50},
	} {
		if got := gcPercent(tc.live, tc.budget); got != tc.want {
			t.Errorf("gcPercent(%d MB, %d MB) = %d, want %d", tc.live/mb, tc.budget/mb, got, tc.want)
		}
	}
}
