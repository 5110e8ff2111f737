// Package textdist measures how far apart two words are, for "did you
// mean" suggestions in configuration errors.
package textdist

// Distance is the Levenshtein distance of a and b (insertions, deletions
// and substitutions of bytes), or limit when it is at least limit (a limit
// of 0 or less means none).
func Distance(a, b string, limit int) int {
	if limit > 0 {
		if d := len(a) - len(b); d >= limit || -d >= limit {
			return limit
		}
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	if limit > 0 {
		return min(prev[len(b)], limit)
	}
	return prev[len(b)]
}
