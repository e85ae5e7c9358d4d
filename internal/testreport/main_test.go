package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReportsSlowestAndFailures(t *testing.T) {
	stream := `{"Action":"start","Package":"a"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"pass","Package":"a","Test":"TestSlow","Elapsed":12.5}
{"Action":"pass","Package":"a","Test":"TestSlow/sub","Elapsed":12.4}
{"Action":"pass","Package":"a","Test":"TestFast","Elapsed":0.1}
{"Action":"output","Package":"a","Output":"ok  \ta\t12.7s\n"}
{"Action":"pass","Package":"a","Elapsed":12.7}
# b [b.test]
{"Action":"start","Package":"b"}
{"Action":"output","Package":"b","Test":"TestBroken","Output":"    broken_test.go:9: wrong\n"}
{"Action":"fail","Package":"b","Test":"TestBroken","Elapsed":3}
{"Action":"output","Package":"b","Output":"FAIL\tb\t3.2s\n"}
{"Action":"fail","Package":"b","Elapsed":3.2}
`
	var out strings.Builder
	r, err := read(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.failed {
		t.Error("a failed test was not a failure")
	}
	r.print(&out, 2)
	want := "ok  \ta\t12.7s\n# b [b.test]\n    broken_test.go:9: wrong\nFAIL\tb\t3.2s\n" + `
Slowest tests:
     12.5s  a TestSlow
      3.0s  b TestBroken

Slowest packages:
     12.7s  a
      3.2s  b

tests: 3 passed, 1 failed, 0 skipped
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestPackageThatNeverEndedFails(t *testing.T) {
	r, err := read(strings.NewReader(`{"Action":"start","Package":"c"}`+"\n"), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.failed {
		t.Error("a package that began and never ended passed")
	}
}
