package relevancy

import (
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// The questions mode follows Ragas' answer relevancy (ResponseRelevancy): N generated
// questions, each with a noncommittal flag, scored by the mean cosine similarity of their
// embeddings to the input's. The prompt is our wording of Ragas' instruction and examples.

const questionMarker = "Write the question that the answer below answers"

func questionPrompt(output string) string {
	return questionMarker + `, and say whether the answer is noncommittal. An answer is noncommittal when it is evasive, vague or ambiguous, such as "I don't know" or "I'm not sure". Give noncommittal as 1 for a noncommittal answer and 0 otherwise.

Examples:
Answer: Albert Einstein was born in Germany.
{"question": "Where was Albert Einstein born?", "noncommittal": 0}

Answer: I don't know about the groundbreaking feature of the smartphone invented in 2023, as I am unaware of information beyond 2022.
{"question": "What was the groundbreaking feature of the smartphone invented in 2023?", "noncommittal": 1}

Answer:
` + output + `

Reply with JSON only: {"question": "...", "noncommittal": 0 or 1}`
}

// generation is one generated question.
type generation struct {
	Question     string `json:"question"`
	Noncommittal any    `json:"noncommittal"`
}

// noncommittal reads the flag as judges write it: 1/0, true/false, "1"/"yes".
func noncommittal(x any) bool {
	switch v := x.(type) {
	case bool:
		return v
	case string:
		s := strings.ToLower(strings.TrimSpace(v))
		return s == "1" || s == "true" || s == "yes"
	default:
		f, err := verdict.ScoreOutOf(x, 1)
		return err == nil && f >= 0.5
	}
}

// questions runs the Ragas method with n generations.
func (p *pipeline) questions(n int) sdk.Result {
	prompt := questionPrompt(p.run.Output)
	// Sample the n generations at 0.3, as Ragas' LLM wrapper does for n > 1, so they differ.
	temperature := 0.0
	if n > 1 {
		temperature = 0.3
	}
	reqs := make([]sdk.CompletionRequest, n)
	for i := range reqs {
		reqs[i] = sdk.CompletionRequest{Messages: []sdk.Message{{Role: "user", Content: prompt}}, JSON: true, Temperature: temperature}
	}
	out, err := p.judge.Complete(p.ctx, reqs)
	if err != nil {
		p.step("generate", prompt, nil)
		return p.fail("generate", err)
	}
	judgekit.Account(&p.tel, out...)
	gens := make([]generation, 0, n)
	for i, r := range out {
		if r.Error != nil {
			p.step("generate", prompt, map[string]any{"generation": i})
			return p.fail("generate", r.Error)
		}
		var g generation
		if err := verdict.Extract(r.Content, &g); err != nil {
			p.step("generate", prompt, map[string]any{"generation": i, "raw": r.Content})
			return p.fail("generate", err)
		}
		gens = append(gens, g)
	}
	var asked []string
	flagged := 0
	type parsed struct {
		Question     string `json:"question"`
		Noncommittal bool   `json:"noncommittal"`
	}
	recorded := make([]parsed, len(gens))
	for i, g := range gens {
		nc := noncommittal(g.Noncommittal)
		recorded[i] = parsed{g.Question, nc}
		if nc {
			flagged++
		}
		if strings.TrimSpace(g.Question) != "" {
			asked = append(asked, g.Question)
		}
	}
	p.step("generate", prompt, recorded)
	if len(asked) == 0 {
		return p.fail("generate", fmt.Errorf("the judge generated no question in %d tries", n))
	}

	vecs, err := p.judge.Embed(p.ctx, append([]string{p.run.Input}, asked...))
	if err != nil {
		p.step("embed", "", nil)
		return p.fail("embed", err)
	}
	if len(vecs) != len(asked)+1 {
		return p.fail("embed", fmt.Errorf("the judge returned %d embeddings for %d texts", len(vecs), len(asked)+1))
	}
	cosines := make([]float64, len(asked))
	var sum float64
	for i := range asked {
		c, ok := judgekit.Cosine(vecs[0], vecs[i+1])
		if !ok {
			return p.fail("embed", fmt.Errorf("embedding of %q or of the input is empty or zero", asked[i]))
		}
		cosines[i] = c
		// A question pointing away from the input is no evidence of relevance; it must
		// not cancel one that matches.
		sum += max(c, 0)
	}
	score := sum / float64(len(asked))
	var flags []string
	switch {
	case flagged == len(gens):
		score = 0
		flags = append(flags, FlagNoncommittal)
	case flagged > 0:
		flags = append(flags, FlagPartlyNoncommittal)
	}
	p.step("generateScore", "", map[string]any{"cosines": cosines, "noncommittal": flagged, "generations": len(gens), "score": score})
	reason := fmt.Sprintf("mean cosine similarity %.2f between the input and %d questions generated from the output", score, len(asked))
	if flagged == len(gens) {
		reason = "every generated question marked the output noncommittal"
	}
	return p.scored(score, reason, flags...)
}
