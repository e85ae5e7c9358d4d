// Package words holds the few helpers messages are worded with, so that
// the configuration, the planner and the executor word them alike.
package words

// Capitalize upper-cases the first letter of s (an error text opening a
// sentence); a first byte that is not a lower-case ASCII letter is kept.
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	if c := s[0]; c >= 'a' && c <= 'z' {
		return string(c-'a'+'A') + s[1:]
	}
	return s
}

// Plural returns one when n is 1, else many: Plural(n, "server", "servers"),
// Plural(n, "it is", "they are").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
