package executor

import "testing"

func TestPlanStepIndex(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want int
		ok   bool
	}{
		{stepOp(1), 1, true},
		{stepOp(12), 12, true},
		{remedyOp(1, "reboot"), 0, false},
		{safetyOp(safetyPowerOn), 0, false},
		{opPowerOff, 0, false},
		{"step:", 0, false},
		{"step:x", 0, false},
		{"step:0", 0, false},
	} {
		got, ok := PlanStepIndex(tc.op)
		if got != tc.want || ok != tc.ok {
			t.Errorf("PlanStepIndex(%q) = %d, %v; want %d, %v", tc.op, got, ok, tc.want, tc.ok)
		}
	}
}
