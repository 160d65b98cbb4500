package support

// NearestWord returns the candidate within two edits of s, the closest
// first, or "" when none is. Such a suggestion reveals at most two
// characters of what was typed.
func NearestWord(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := EditDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
