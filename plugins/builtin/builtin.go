// Package builtin lists scorekit's built-in scorers. It imports only the sdk and the
// scorers, so the same list builds into the host (native), a WASM module and a process
// plugin (see plugin/main.go).
package builtin

import (
	"github.com/scorekit/scorekit/plugins/contextprecision"
	"github.com/scorekit/scorekit/plugins/contextrecall"
	"github.com/scorekit/scorekit/plugins/contextrelevance"
	"github.com/scorekit/scorekit/plugins/faithfulness"
	"github.com/scorekit/scorekit/plugins/hallucination"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/plugins/masis"
	"github.com/scorekit/scorekit/plugins/noise"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/plugins/rubric"
	"github.com/scorekit/scorekit/plugins/similarity"
	"github.com/scorekit/scorekit/plugins/toolcalls"
	"github.com/scorekit/scorekit/sdk"
)

// Factories returns the factories of every built-in scorer: the scorers that need no LLM
// (the heuristic ones, then tool_calls), then the judge scorers.
func Factories() []func() sdk.Scorer {
	out := append([]func() sdk.Scorer{}, heuristic.Factories()...)
	return append(out, toolcalls.New, relevancy.New, contextprecision.New, masis.New, rubric.New,
		faithfulness.New, hallucination.New, contextrecall.New, contextrelevance.New, noise.New, similarity.New)
}
