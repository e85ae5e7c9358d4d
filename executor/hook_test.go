package executor_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
)

func TestExecHooks(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	env := []string{"RACKFORM_SERVER=s1", "RACKFORM_NODE=n1", "RACKFORM_RACK=r1", "RACKFORM_CLUSTER=c1"}
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		argv     []string
		timeout  time.Duration
		want     string
		timeout2 bool
	}{
		{"env", []string{"sh", "-c", `test "$RACKFORM_SERVER/$RACKFORM_NODE/$RACKFORM_RACK/$RACKFORM_CLUSTER" = s1/n1/r1/c1`}, time.Minute, "", false},
		{"exit status", []string{"sh", "-c", "exit 3"}, time.Minute, "exited with status 3", false},
		{"timeout", []string{"sleep", "10"}, 50 * time.Millisecond, "did not finish", true},
		{"no hook", nil, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := executor.ExecHooks{}.Run(ctx, executor.Hook{Name: "drain", Argv: tc.argv, Env: env, Timeout: tc.timeout})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if tc.timeout2 && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("timeout not reported as DeadlineExceeded: %v", err)
			}
		})
	}
}
