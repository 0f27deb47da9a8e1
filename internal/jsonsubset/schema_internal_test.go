package jsonsubset

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFirstDuplicateMatchesPairwise holds uniqueItems' keyed search to the pairwise loop:
// the same first pair, numbers equal by value (1, 1.0, 1e0; -0 and 0), objects equal in
// any key order, numbers out of range equal to nothing.
func TestFirstDuplicateMatchesPairwise(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	atoms := []string{`1`, `1.0`, `1e0`, `-0`, `0`, `2`, `"1"`, `"a"`, `true`, `false`, `null`, `1e400`,
		`[1]`, `[1.0]`, `[]`, `{}`, `{"a":1,"b":2}`, `{"b":2,"a":1.0}`, `{"a":1}`, `[1e400]`, `[[1],[2]]`, `[[1.0],[2e0]]`}
	for n := range 2000 {
		parts := make([]string, r.IntN(8))
		for i := range parts {
			parts[i] = atoms[r.IntN(len(atoms))]
		}
		dec := json.NewDecoder(strings.NewReader("[" + strings.Join(parts, ",") + "]"))
		dec.UseNumber()
		var x []any
		if err := dec.Decode(&x); err != nil {
			t.Fatal(err)
		}
		wi, wj, wdup := 0, 0, false
	outer:
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				if jsonEqual(x[i], x[j]) {
					wi, wj, wdup = i, j, true
					break outer
				}
			}
		}
		if i, j, dup := firstDuplicate(x); dup != wdup || i != wi || j != wj {
			t.Fatalf("case %d %v: first duplicate (%d, %d, %v), want (%d, %d, %v)", n, parts, i, j, dup, wi, wj, wdup)
		}
	}
}
