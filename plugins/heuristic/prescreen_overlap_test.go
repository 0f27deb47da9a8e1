package heuristic_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// TestNoVerdictFromOverlap scores the whole corpus twice through the host: as the
// pre-screen is, and with its word-overlap signal forced to "the output shares words with
// the input". Every run's pass or fail must be the same: whether an output shares words
// with its request may raise a hint (off_topic, wrong_shape), never decide a verdict;
// what a request needs is a judge's question.
func TestNoVerdictFromOverlap(t *testing.T) {
	cases, err := corpus.LoadFound()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(f func() sdk.Scorer) *host.Scorer {
		reg := host.NewRegistry()
		if err := reg.Register(host.Native(f), false); err != nil {
			t.Fatal(err)
		}
		s, err := host.New(reg).Open(ctx, "prescreen", host.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(ctx) })
		return s
	}
	as, forced := open(heuristic.NewPrescreen), open(heuristic.NewPrescreenWordsShared)
	changed := map[string]int{}
	var examples []string
	for _, c := range cases {
		a, b := as.Score(ctx, c.Run), forced.Score(ctx, c.Run)
		if a.Passed == nil || b.Passed == nil {
			t.Fatalf("%s: no verdict (%s, %s)", c.Run.ID, a.Status, b.Status)
		}
		if *a.Passed != *b.Passed {
			changed[c.Source]++
			if len(examples) < 10 {
				examples = append(examples, fmt.Sprintf("%s: passed %v, %v with words shared (%s)", c.Run.ID, *a.Passed, *b.Passed, a.Reason))
			}
		}
	}
	if len(changed) > 0 {
		var by []string
		n := 0
		for src, k := range changed {
			by = append(by, fmt.Sprintf("%s %d", src, k))
			n += k
		}
		sort.Strings(by)
		t.Errorf("%d of %d runs change verdict when the overlap signal says \"shares words\" (%s); for example:\n%s",
			n, len(cases), strings.Join(by, ", "), strings.Join(examples, "\n"))
	}
}
