package textdist

import "testing"

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 0, 0},
		{"database", "databse", 0, 1},
		{"databse", "database", 3, 1},
		{"kitten", "sitting", 0, 3},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 2},
		{"a", "abcdef", 3, 3},
		{"abc", "", 0, 3},
	}
	for _, c := range cases {
		if got := Distance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
