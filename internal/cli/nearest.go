package cli

import "github.com/Control-D-Inc/ctrld-install/internal/explain"

// nearestWord returns the candidate within two edits of s, the closest
// first, or "" when none is. Such a suggestion reveals at most two
// characters of what was typed.
func nearestWord(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := explain.EditDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
