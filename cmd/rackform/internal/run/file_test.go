package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

// ReadFile hashes what it reads, refuses a file past MaxPlanSize before
// reading it (a sparse file: no room, no time), and names the file and
// the limit.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "p.plan")
	if err := os.WriteFile(small, []byte(`{"format_version":"1.4"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	if f.SHA256 != plan.SHA256(f.Bytes) || string(f.Bytes) != `{"format_version":"1.4"}` {
		t.Errorf("ReadFile: %q hashed %s", f.Bytes, f.SHA256)
	}
	for _, expect := range []string{f.SHA256, "sha256:" + strings.ToUpper(f.SHA256), " " + f.SHA256 + "\n"} {
		if err := f.CheckSHA256(expect); err != nil {
			t.Errorf("CheckSHA256(%q): %v", expect, err)
		}
	}
	if err := f.CheckSHA256(strings.Repeat("0", 64)); err == nil || !strings.Contains(err.Error(), "p.plan has SHA-256 "+f.SHA256+", not the expected "+strings.Repeat("0", 64)) {
		t.Errorf("CheckSHA256 of another hash: %v", err)
	}

	huge := filepath.Join(dir, "huge.plan")
	h, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(MaxPlanSize + 1); err != nil {
		t.Fatal(err)
	}
	h.Close()
	_, err = ReadFile(huge)
	if err == nil || !strings.Contains(err.Error(), huge+" is 268 MB, larger than the 256 MiB rackform reads") {
		t.Fatalf("ReadFile of a file past the limit: %v", err)
	}
}
