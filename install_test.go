package rackform

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
)

// TestInstallListsAgree holds together the three places that say what the
// tests need: README's Quick start (the command a newcomer types), .ci/run
// (what CI installs) and internal/testenv (what each test looks for and
// tells the user to install when it is missing).
func TestInstallListsAgree(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^sudo apt-get install -y (.+)$`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no `sudo apt-get install -y …` line in its Quick start")
	}
	fromREADME := strings.Fields(string(m[1]))

	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	m = regexp.MustCompile(`(?m)^packages="([^"]+)"$`).FindSubmatch(ci)
	if m == nil {
		t.Fatal(`.ci/run has no packages="…" line`)
	}
	fromCI := strings.Fields(string(m[1]))
	m = regexp.MustCompile(`(?m)^export RACKFORM_TEST_REQUIRE="([^"]+)"$`).FindSubmatch(ci)
	if m == nil {
		t.Fatal(`.ci/run has no export RACKFORM_TEST_REQUIRE="…" line`)
	}
	required := strings.Fields(string(m[1]))
	slices.Sort(fromREADME)
	slices.Sort(fromCI)
	if !slices.Equal(fromREADME, fromCI) {
		t.Errorf("README installs %v, .ci/run installs %v", fromREADME, fromCI)
	}
	for _, c := range testenv.Components() {
		pkg, ok := strings.CutPrefix(c.Install, "apt-get install ")
		if !ok {
			continue // not a Debian package (the captures)
		}
		if !slices.Contains(fromCI, pkg) {
			t.Errorf("testenv tells users to install %s for %s; README and .ci/run do not", pkg, c.Name)
		}
		if !slices.Contains(required, c.Name) {
			t.Errorf(".ci/run does not require %s (RACKFORM_TEST_REQUIRE)", c.Name)
		}
	}
}
