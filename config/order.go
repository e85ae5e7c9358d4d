package config

import "strings"

// RackLess returns how racks sort under a compute order (rule 6):
// OrderAlphanumeric is plain byte-wise order ("rack10" before "rack2"),
// OrderNatural compares runs of digits by value ("rack2" before "rack10").
// Validation and the planner both order racks with it.
func RackLess(order string) func(a, b string) bool {
	if order == OrderNatural {
		return naturalLess
	}
	return func(a, b string) bool { return a < b }
}

// naturalLess compares runs of digits by value and everything else
// byte-wise ("rack2" < "rack10"); equal values with more leading zeros
// sort later.
func naturalLess(a, b string) bool {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	digits := func(s string) (string, string) {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return s[:i], s[i:]
	}
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, ra := digits(a)
			nb, rb := digits(b)
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if len(ta) != len(tb) {
				return len(ta) < len(tb)
			}
			if ta != tb {
				return ta < tb
			}
			if na != nb {
				return len(na) < len(nb)
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}
