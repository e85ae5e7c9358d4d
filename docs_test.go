package rackform

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameRealTests holds docs/rollout-rules.md to the code: every
// test it names for a rule exists, and every TestRuleNN test is named
// under rule NN, so the page cannot drift from what is pinned.
func TestDocsNameRealTests(t *testing.T) {
	doc, err := os.ReadFile("docs/rollout-rules.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "grep", "-h", "-o", "-E", `^func Test[A-Za-z0-9_]+`, "--", "*_test.go").Output()
	if err != nil {
		t.Skipf("git grep: %v (not a git checkout?)", err)
	}
	defined := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(l, "func "); ok {
			defined[name] = true
		}
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
		if !defined[m[1]] {
			t.Errorf("docs/rollout-rules.md names %s, which no test file defines", m[1])
		}
	}
	for name := range defined {
		if regexp.MustCompile(`^TestRule[0-9]`).MatchString(name) && !named[name] {
			t.Errorf("%s is not named in docs/rollout-rules.md", name)
		}
	}
}

// TestNothingCitesOutsideTheRepository: the design and the rules the code
// cites live in docs/; nothing cites documents a clone does not have.
func TestNothingCitesOutsideTheRepository(t *testing.T) {
	out, err := exec.Command("git", "grep", "-n", "-I", "-E", `ROLLOUT-RULES|DESIGN\.md|DESIGN §|shared/(DESIGN|ROLLOUT|STYLE|seeds)`, "--", ".", ":!docs_test.go", ":!cmd/rackform/internal/command/wording_test.go").Output()
	if err != nil && len(out) == 0 {
		return // git grep exits 1 when nothing matches
	}
	if len(out) > 0 {
		t.Errorf("cites documents outside the repository (use docs/architecture.md or docs/rollout-rules.md):\n%s", out)
	}
}

// TestDocLinksResolve: every relative link of the README and docs/ names a
// file of the repository, so moving a section cannot leave a reader at a
// page that is not there.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md", "examples/README.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", page, target)
			}
		}
	}
}
