package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file over its bound is refused by its size, naming the file, its size
// and the bound in words; one at the bound is read whole.
func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	limit := Limit{Bytes: 1 << 10, What: "a scenario"}
	at := filepath.Join(dir, "at.hcl")
	if err := os.WriteFile(at, make([]byte, 1<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(at, limit); err != nil || len(b) != 1<<10 {
		t.Errorf("Read of a file at the bound: %d bytes, %v", len(b), err)
	}
	over := filepath.Join(dir, "scenario.hcl")
	if err := os.WriteFile(over, make([]byte, 1<<10+1), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Read(over, limit)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != over+" is larger than the 1 KiB a scenario may be" {
		t.Errorf("Read of a file over the bound: %v", err)
	}
	// A sparse 3 GB file takes no room and is refused without reading it.
	huge := filepath.Join(dir, "huge.hcl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3_100_000_000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Read(huge, Limit{Bytes: 16 << 20, What: "a scenario"})
	if err == nil || err.Error() != huge+" is 3.1 GB, over the 16 MiB a scenario may be" {
		t.Errorf("Read of a 3 GB file: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 900: "900 bytes", 1 << 10: "1 KiB", 1500: "1500 bytes", 200_000: "200 KB",
		16 << 20: "16 MiB", 256<<20 + 1: "268 MB", 3_100_000_000: "3.1 GB",
	} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// Depth counts what the parser recurses into, and nothing it does not:
// brackets in strings, heredocs and comments are text.
func TestCheckDepth(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	for _, tc := range []struct {
		name   string
		syntax Syntax
		src    string
		// line and column where the limit of 8 is passed; 0 when not.
		line, col int
	}{
		{"shallow HCL", HCL, "a = [[1], {b = (2)}]\nblock \"x\" {\n  c = \"${d[0]}\"\n}\n", 0, 0},
		{"HCL at the limit", HCL, "a = " + deep("[", "]", 8), 0, 0},
		{"HCL lists", HCL, "a = " + deep("[", "]", 9), 1, 13},
		{"HCL mixed", HCL, "x {\n y {\n  a = [{b = (((f([1])))) }]\n }\n}\n", 3, 18},
		{"brackets in a string", HCL, `a = "` + strings.Repeat("[{(", 50) + `"`, 0, 0},
		{"brackets in a comment", HCL, "# " + strings.Repeat("[", 50) + "\n/* " + strings.Repeat("{", 50) + " */\n// ((((((((((\n", 0, 0},
		{"brackets in a heredoc", HCL, "a = <<EOT\n" + strings.Repeat("[", 50) + "\nEOT\n", 0, 0},
		{"interpolations in strings", HCL, `a = "${"${"${"${"x"}"}"}"}"`, 1, 17},
		{"closing brackets in a string do not hide depth", HCL, "a = [[[[[\"]]]]]]]]]]\" [[[[1]]]]]]]]]", 1, 26},
		{"mismatched closes do not hide depth", HCL, "a = [[[[[ ))))) [[[[1]]]]]]]]]", 1, 20},
		{"template directives", Template, strings.Repeat("%{ if true }", 8) + "x" + strings.Repeat("%{ endif }", 8), 1, 85},
		{"template interpolations", Template, "${" + deep("(", ")", 8) + "}", 1, 10},
		{"shallow template", Template, "%{ for x in y }${x}%{ endfor }" + strings.Repeat("[", 50), 0, 0},
		{"JSON", JSON, `{"a": [1, {"b": [[]]}]}`, 0, 0},
		{"deep JSON", JSON, "{\"a\":\n" + deep("[", "]", 8), 2, 8},
		{"brackets in JSON strings", JSON, `{"a": "[[[[[[[[[[\"[[[[[[[[[[[", "b": "\\"}`, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDepth("f", []byte(tc.src), tc.syntax, 8)
			var td *TooDeepError
			switch {
			case tc.line == 0 && err != nil:
				t.Errorf("refused: %v", err)
			case tc.line != 0 && !errors.As(err, &td):
				t.Errorf("not refused: %v", err)
			case tc.line != 0 && (td.Line != tc.line || td.Column != tc.col):
				t.Errorf("refused at line %d, column %d, want %d, %d", td.Line, td.Column, tc.line, tc.col)
			}
		})
	}
	err := CheckDepth("deep.rf.hcl", []byte("a = "+deep("[", "]", 100_000)), HCL, MaxDepth)
	want := "deep.rf.hcl nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 261); no real file comes near that, so rackform refuses it rather than parse it"
	if err == nil || err.Error() != want {
		t.Errorf("100,000 levels: %v", err)
	}
}
