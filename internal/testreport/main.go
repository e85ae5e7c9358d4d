// Command testreport reads `go test -json` on stdin and prints what go test
// without -json would have: a line per package, and all the output of a
// package that failed. It ends with the slowest tests and packages, so
// `make test` says where its time goes, and exits 1 when a test or a
// package failed (or the stream says nothing of a package it began).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string
	seconds float64
}

// report is what the stream said: the slowest tests and the packages.
type report struct {
	tests, packages []timing
	failed          bool
	started         map[string]bool
	unfinished      []string // packages that began and never ended
	// passed, failed and skipped count tests and subtests.
	passed, failedN, skipped int
	// output is each package's output until it ends: printed whole when
	// it failed, else only its summary line.
	output map[string][]string
}

func main() {
	r, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
	r.print(os.Stdout, 10)
	if r.failed {
		os.Exit(1)
	}
}

// read prints each package's output when it ends, and collects the timings
// of top-level tests and of packages. A line that is not JSON (a build
// error printed before the stream) is copied as it is.
func read(in io.Reader, out io.Writer) (*report, error) {
	r := &report{started: map[string]bool{}, output: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		if e.Output != "" {
			if e.Package == "" {
				io.WriteString(out, e.Output)
			} else {
				r.output[e.Package] = append(r.output[e.Package], e.Output)
			}
		}
		switch e.Action {
		case "start":
			r.started[e.Package] = true
		case "pass", "fail":
			if e.Action == "fail" {
				r.failed = true
			}
			if e.Test != "" && e.Action == "pass" {
				r.passed++
			} else if e.Test != "" {
				r.failedN++
			}
			switch {
			case e.Test == "":
				r.flush(out, e.Package, e.Action == "fail")
				r.packages = append(r.packages, timing{e.Package, e.Elapsed})
			case !strings.Contains(e.Test, "/"):
				r.tests = append(r.tests, timing{e.Package + " " + e.Test, e.Elapsed})
			}
		case "skip":
			if e.Test == "" {
				r.flush(out, e.Package, false)
			} else {
				r.skipped++
			}
		}
	}
	for pkg := range r.started {
		r.unfinished = append(r.unfinished, pkg)
	}
	slices.Sort(r.unfinished)
	for _, pkg := range r.unfinished {
		r.flush(out, pkg, true)
		r.failed = true
	}
	return r, sc.Err()
}

// flush prints what a package that ended said: everything when it failed,
// else its summary line ("ok  ", "?   ").
func (r *report) flush(out io.Writer, pkg string, failed bool) {
	for _, o := range r.output[pkg] {
		if failed || strings.HasPrefix(o, "ok  ") || strings.HasPrefix(o, "?   ") {
			io.WriteString(out, o)
		}
	}
	delete(r.output, pkg)
	delete(r.started, pkg)
}

func (r *report) print(w io.Writer, n int) {
	for _, list := range []struct {
		title string
		items []timing
	}{{"Slowest tests", r.tests}, {"Slowest packages", r.packages}} {
		items := slices.Clone(list.items)
		slices.SortStableFunc(items, func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) })
		if len(items) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", list.title)
		for _, t := range items[:min(n, len(items))] {
			fmt.Fprintf(w, "  %7.1fs  %s\n", t.seconds, t.name)
		}
	}
	for _, pkg := range r.unfinished {
		fmt.Fprintf(w, "\n%s began but never ended (the test binary died?)\n", pkg)
	}
	fmt.Fprintf(w, "\ntests: %d passed, %d failed, %d skipped\n", r.passed, r.failedN, r.skipped)
}
