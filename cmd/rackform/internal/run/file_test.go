package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A plan whose configuration snapshot is nested deeper than HCL's parser
// can take is refused when it is decoded, naming the plan and the file:
// applying it overflowed the stack when the snapshot was parsed.
func TestDecodeRefusesDeepSnapshot(t *testing.T) {
	at := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	deep := "locals {\n  a = " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n}\n"
	for name, src := range map[string]string{"shallow": "locals {\n  a = [[1]]\n}\n", "deep": deep} {
		p := &plan.Plan{RackformVersion: "test", CreatedAt: at, NotAfter: at.Add(72 * time.Hour),
			Config: plan.Snapshot{Dir: "fleet", Files: []plan.File{plan.NewFile("main.rf.hcl", []byte(src))}}}
		b, err := plan.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&File{Name: "deep.plan", Bytes: b}).Decode()
		want := "deep.plan is not a usable plan: in its configuration snapshot, main.rf.hcl nests brackets, braces, parentheses or strings more than 256 levels deep (at line 2, column 262)"
		switch {
		case name == "shallow" && err != nil:
			t.Errorf("a shallow snapshot: %v", err)
		case name == "deep" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("a deep snapshot: %v, want %q", err, want)
		}
	}
}

// A plan file nested deeper than any plan is refused before it is
// decoded, saying so in words, not in the JSON decoder's.
func TestDecodeRefusesDeepPlan(t *testing.T) {
	b := []byte(`{"format_version":"1.5","x":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}")
	_, err := (&File{Name: "deep.plan", Bytes: b}).Decode()
	want := "deep.plan is not a usable plan: deep.plan nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 284)"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Decode: %v, want %q", err, want)
	}
}
