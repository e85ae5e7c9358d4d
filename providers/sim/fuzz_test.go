package sim

import (
	"testing"
)

// FuzzParseImage: image names come from clients (ImageURI, file names).
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:9/images/bios-2.80.bin", "runtime-4.6.1.iso", "C:\\x\\nic-1.fwpkg", "%zz", "-", "bmc-.bin.bin"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		comp, v, ok := parseImage(s)
		if !ok && (comp != "" || v != "") {
			t.Fatalf("parseImage(%q) = %q %q false", s, comp, v)
		}
		if ok && v == "" {
			t.Fatalf("parseImage(%q): ok with an empty version", s)
		}
	})
}

// FuzzParseFault: -fault and the admin API take fault specs from users.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"latency:50ms", "busy", "session-limit:2", "error:-1", "timeout:xyz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ft, err := ParseFault(s)
		if err == nil && ft.validate() != nil {
			t.Fatalf("ParseFault(%q) accepted an invalid fault %+v", s, ft)
		}
	})
}
