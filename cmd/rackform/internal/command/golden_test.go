package command

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// runCommand runs rackform with args on captured streams, as Main would
// with stdout a terminal (color) or not.
func runCommand(t *testing.T, color bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	m := &Meta{
		Streams: Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb},
		Color:   color,
		Getenv:  func(string) string { return "" },
	}
	code = m.run(t.Context(), args)
	return code, out.String(), errb.String()
}
