package citation_test

import (
	"fmt"

	"github.com/scorekit/scorekit/internal/citation"
	"github.com/scorekit/scorekit/sdk"
)

// A true claim cited to the wrong passage is caught: the year is in passage 2, not 1.
func ExampleAudit() {
	context := []sdk.Passage{
		{ID: "1", Text: "The Eiffel Tower stands 330 metres tall in Paris."},
		{ID: "2", Text: "The Eiffel Tower was completed in 1889 for the World Fair."},
	}
	a, ok := citation.Audit("The Eiffel Tower was completed in 1889 [1]. It is a famous landmark.", context)
	fmt.Println(ok, a.Citations, a.Sentences, a.UncitedSentences, a.HallucinationDetected)
	fmt.Println(a.UnsupportedCitations)
	// Output:
	// true 1 2 1 true
	// [1: number 1889 is not in the cited passage but is in passage 2]
}

func ExampleSentences() {
	for _, s := range citation.Sentences("Hello! Dr. Smith arrived in the U.S. Army base at 5 p.m. [2]. Any questions?", nil) {
		fmt.Printf("%v %q %v\n", s.Claim, s.Text, s.Cites)
	}
	// Output:
	// false "Hello!" []
	// true "Dr. Smith arrived in the U.S. Army base at 5 p.m.." [2]
	// false "Any questions?" []
}
