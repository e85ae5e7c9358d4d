package command

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// internalRef matches a citation of the internal rules document: users never
// see it, every message explains the rule in words instead.
var internalRef = regexp.MustCompile(`ROLLOUT-RULES|\b[Rr]ules? [0-9]`)

// repoRoot is the module root, four levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	return root
}

// User-facing text explains rules in words: no command's help cites the
// internal rules document or a rule number.
func TestHelpTextsExplainRulesInWords(t *testing.T) {
	m := &Meta{}
	runners := m.commands()
	for name, r := range runners {
		if h := helpText(r); internalRef.MatchString(h) {
			t.Errorf("help of %q cites an internal rule: %q", name, internalRef.FindString(h))
		}
	}
	var out, errb bytes.Buffer
	Main(context.Background(), []string{"-help"}, Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	if s := out.String() + errb.String(); internalRef.MatchString(s) {
		t.Errorf("rackform -help cites an internal rule: %q", internalRef.FindString(s))
	}
}

// User-facing text explains rules in words: no string literal in the
// program (messages, errors, events, views) and no expected output (goldens,
// the expected parts of testscripts) cites the internal rules document or a
// rule number. Comments and test names may.
func TestMessagesExplainRulesInWords(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			checked++
			for _, lit := range stringLiterals(t, path) {
				if internalRef.MatchString(lit.text) {
					t.Errorf("%s:%d: message cites an internal rule (%q); explain the rule in words", rel, lit.line, internalRef.FindString(lit.text))
				}
			}
		case strings.HasSuffix(path, ".txtar"):
			checked++
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(data), "\n") {
				// Comments in a script narrate the test; commands and
				// expected output are what users see.
				if strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				if internalRef.MatchString(line) {
					t.Errorf("%s:%d: expected output cites an internal rule: %q", rel, i+1, line)
				}
			}
		case strings.Contains(filepath.ToSlash(rel), "/testdata/") && isGoldenName(d.Name()):
			checked++
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if loc := internalRef.FindIndex(data); loc != nil {
				line := bytes.Count(data[:loc[0]], []byte("\n")) + 1
				t.Errorf("%s:%d: golden output cites an internal rule: %q", rel, line, data[loc[0]:loc[1]])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked under %s; the walk is broken", checked, root)
	}
}

func isGoldenName(name string) bool {
	for _, ext := range []string{".golden", ".md", ".txt", ".jsonl", ".json", ".html"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

type literal struct {
	text string
	line int
}

func stringLiterals(t *testing.T, path string) []literal {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var lits []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
			s, err := strconv.Unquote(b.Value)
			if err != nil {
				s = b.Value
			}
			lits = append(lits, literal{s, fset.Position(b.Pos()).Line})
		}
		return true
	})
	return lits
}

// The check above can fail: a literal citing a rule number is found.
func TestInternalRefPattern(t *testing.T) {
	for _, s := range []string{"(ROLLOUT-RULES 27)", "see rule 17", "Rules 11 and 12"} {
		if !internalRef.MatchString(s) {
			t.Errorf("%q not caught", s)
		}
	}
	for _, s := range []string{"the rule in words", "rules on servers", "ruler 3"} {
		if internalRef.MatchString(s) {
			t.Errorf("%q caught wrongly", s)
		}
	}
}
