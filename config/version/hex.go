package version

import (
	"fmt"
	"strconv"
	"strings"
)

// The hex scheme reads firmware whose fields are hexadecimal: NVIDIA GPU
// and NVSwitch VBIOS ("96.00.61.00.01", "94.02.4B.00.01"), CPLDs
// ("F5.11.CB"), power supplies ("00.2A.2B"), single hexadecimal values
// ("0x0F", "3F"). Fields are separated by dots; each is 1 to 16 hexadecimal
// digits, in either case, optionally after "0x"; they compare as numbers,
// field by field, a missing field counting as 0 ("0x0D" = "0D" = "0d.0").
//
// It is a scheme the user declares, never a reading the other schemes fall
// back to: "96.00.61.00.01" alone does not say whether "61" is sixty-one or
// 0x61, and "1.7.5F" is a revision letter to the vendor scheme (before
// 1.7.6) but 0x5F to this one (after 1.7.6). Versions whose fields are all
// decimal digits order the same way in both bases (the longer number is the
// larger, else the first differing digit decides), so declaring hex for a
// component costs nothing while its versions happen to carry no letter.

// maxHexField is the most hexadecimal digits a field holds (64 bits).
const maxHexField = 16

func parseHex(s string) ([]uint64, error) {
	if s == "" {
		return nil, fmt.Errorf("an empty string is not a hexadecimal version")
	}
	return parseFields(s, hexForm, hexField)
}

// hexForm names the form in parseHex's errors, made once: versions are
// parsed for every member of every server.
var hexForm = fmt.Sprintf("a hexadecimal version (hexadecimal numbers of at most %d digits separated by dots, each optionally after 0x)", maxHexField)

// hexField reads one field: optional 0x, then hexadecimal digits.
func hexField(f string) (uint64, bool) {
	digits := f
	if len(f) > 2 && f[0] == '0' && (f[1] == 'x' || f[1] == 'X') {
		digits = f[2:]
	}
	if digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if !isHexDigit(digits[i]) {
			return 0, false
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > maxHexField {
		return 0, false
	}
	if digits == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(digits, 16, 64)
	return n, err == nil
}

func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// previousHex lowers the last non-zero field of a hexadecimal version by
// one, keeping its width, its 0x and the case of its letters ("94.02.4B" →
// "94.02.4A", "0x10" → "0x0F"); ok is false when every field is 0.
func previousHex(raw string) (string, bool) {
	fields := strings.Split(raw, ".")
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		n, ok := hexField(f)
		if !ok {
			return "", false
		}
		if n == 0 {
			continue
		}
		prefix, digits := "", f
		if len(f) > 2 && f[0] == '0' && (f[1] == 'x' || f[1] == 'X') {
			prefix, digits = f[:2], f[2:]
		}
		verb := "%0*X"
		if strings.ContainsAny(digits, "abcdef") {
			verb = "%0*x"
		}
		fields[i] = prefix + fmt.Sprintf(verb, len(digits), n-1)
		return strings.Join(fields, "."), true
	}
	return "", false
}
