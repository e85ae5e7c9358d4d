package applyview

import "testing"

func TestScreenRows(t *testing.T) {
	for _, tc := range []struct {
		text  string
		width int
		want  int
	}{
		{"a\nb\n", 0, 2},
		{"a\nb\n", 80, 2},
		{"0123456789\n", 4, 3},
		{"\x1b[32m####\x1b[0m--\n", 6, 1},
		{"\x1b[32m####\x1b[0m--\n", 5, 2},
		{"\n", 10, 1},
	} {
		if got := screenRows(tc.text, tc.width); got != tc.want {
			t.Errorf("screenRows(%q, %d) = %d, want %d", tc.text, tc.width, got, tc.want)
		}
	}
}
