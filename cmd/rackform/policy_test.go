package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/rogpeppe/go-internal/testscript"
)

// evalPolicy evaluates the deny rules (data.main.deny, conftest's
// convention) of the Rego files in dir against input, and returns the
// denial messages sorted. The files' own unit tests (test_* rules) are
// evaluated too: a failing one is an error.
func evalPolicy(ctx context.Context, dir string, input []byte) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.rego"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Rego files in %s", dir)
	}
	var doc any
	if err := json.Unmarshal(input, &doc); err != nil {
		return nil, fmt.Errorf("the input is not JSON: %v", err)
	}
	opts := []func(*rego.Rego){rego.Query("data.main"), rego.Input(doc)}
	var tests []string // the test_ rules the files define
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		opts = append(opts, rego.Module(f, string(src)))
		for _, m := range testRule.FindAllStringSubmatch(string(src), -1) {
			tests = append(tests, m[1])
		}
	}
	rs, err := rego.New(opts...).Eval(ctx)
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, fmt.Errorf("data.main is undefined")
	}
	pkg, _ := rs[0].Expressions[0].Value.(map[string]any)
	// A test rule that fails is undefined: it is missing from the result.
	var failed []string
	for _, name := range tests {
		if pkg[name] != true {
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return nil, fmt.Errorf("the policy's own tests fail: %s", strings.Join(failed, ", "))
	}
	var out []string
	deny, _ := pkg["deny"].([]any)
	for _, d := range deny {
		out = append(out, fmt.Sprint(d))
	}
	slices.Sort(out)
	return out, nil
}

// testRule finds the unit tests of a Rego file: rules named test_….
var testRule = regexp.MustCompile(`(?m)^(test_[A-Za-z0-9_]+)\b`)

// cmdPolicy is the script command `policy DIR FILE`: it evaluates the
// deny rules of the Rego policy in DIR (OPA's Go library, as conftest
// and `opa eval` would) against FILE, a `show -json` document, and prints
// one line per denial ("deny: MESSAGE") or "pass". It fails only when the
// policy cannot be evaluated; scripts check the lines with stdout.
func cmdPolicy(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! policy (check the denials with stdout)")
	}
	if len(args) != 2 {
		ts.Fatalf("usage: policy DIR FILE")
	}
	input, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	denials, err := evalPolicy(context.Background(), ts.MkAbs(args[0]), input)
	if err != nil {
		ts.Fatalf("policy %s: %v", args[0], err)
	}
	if len(denials) == 0 {
		fmt.Fprintln(ts.Stdout(), "pass")
	}
	for _, d := range denials {
		fmt.Fprintln(ts.Stdout(), "deny: "+d)
	}
}
