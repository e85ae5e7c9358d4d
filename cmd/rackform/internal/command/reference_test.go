package command

import (
	"path/filepath"
	"testing"
)

// TestCLIReference holds docs/cli.md to the commands: it is what Reference
// renders from their flag sets and help texts (-update rewrites it), and it
// lists every command rackform has.
func TestCLIReference(t *testing.T) {
	missing, unknown := referenceMissing()
	if len(missing) > 0 || len(unknown) > 0 {
		t.Fatalf("referenceOrder leaves out %v and names %v, which are no command", missing, unknown)
	}
	golden(t, filepath.Join("..", "..", "..", "..", "docs", "cli.md"), []byte(Reference()))
}
