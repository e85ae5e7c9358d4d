package command

import (
	"bytes"
	"context"
	"flag"
	"testing"
	"time"
)

// busyRunner is a command busy in code that does not look at its context.
type busyRunner struct{ took time.Duration }

func (busyRunner) Synopsis() string     { return "" }
func (busyRunner) Flags() *flag.FlagSet { return flag.NewFlagSet("busy", flag.ContinueOnError) }
func (busyRunner) Usage() string        { return "rackform busy [options]" }
func (busyRunner) Description() string  { return "" }
func (b busyRunner) Run(context.Context, []string) int {
	time.Sleep(b.took)
	return ExitOK
}

// A command that does not stop at a signal is cut short interruptGrace
// after it, with 130 and a line naming it; one that ends in time keeps
// its own exit code.
func TestRunBoundedAfterSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	start := time.Now()
	code := runBounded(ctx, busyRunner{took: time.Minute}, nil, &stderr)
	if took := time.Since(start); code != ExitInterrupted || took > interruptGrace+time.Second {
		t.Fatalf("busy command after a signal: exit %d after %s", code, took)
	}
	if stderr.String() != "Interrupted: busy stopped.\n" {
		t.Errorf("stderr %q", stderr.String())
	}
	if code := runBounded(ctx, busyRunner{took: 10 * time.Millisecond}, nil, &stderr); code != ExitOK {
		t.Errorf("a command that ends within the grace: exit %d", code)
	}
	if code := runBounded(context.Background(), busyRunner{took: 2 * interruptGrace}, nil, &stderr); code != ExitOK {
		t.Errorf("without a signal: exit %d", code)
	}
	// apply decides alone how it stops (BMC requests finish first).
	if !ownsInterrupts(&applyCommand{}) || ownsInterrupts(&showCommand{}) {
		t.Error("apply must own its interrupts, show must not")
	}
}
