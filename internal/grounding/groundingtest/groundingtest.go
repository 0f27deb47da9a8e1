// Package groundingtest scripts the project's test judge (internal/judgetest) with the
// verdicts Mastra's judge gave on Mastra's own grounding cases (testdata/mastra-grounding),
// translated into the one-call answers of scorekit's claim-based scorers. Tests and
// benchmarks use it to run faithfulness, hallucination_free and context_recall end to end
// without a model: the formula, the host and the agreement command see what Mastra's
// judge said.
package groundingtest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgetest"
)

// Files maps each scorer to its file in testdata/mastra-grounding.
var Files = map[string]string{
	"faithfulness":       "faithfulness",
	"hallucination_free": "hallucination",
	"context_recall":     "context_recall",
	"context_relevance":  "context_relevance",
	"answer_similarity":  "answer_similarity",
	"noise_robustness":   "noise_sensitivity",
}

// Answer is scorer's one-call answer carrying the verdicts Mastra's judge gave on c, and
// false when c has nothing to answer from (no run, or no recording where one is needed).
//
//   - faithfulness: Mastra's yes, no and unsure are supported, contradicted and
//     unverifiable;
//   - hallucination_free: Mastra's no (not hallucinated) is grounded; its yes is
//     contradicted when the judge's reason speaks of a contradiction, else unsupported (both
//     count as hallucinated, so the split changes the reason, not the score);
//   - context_recall: Mastra's tests mock this scorer and record no verdicts, so the answer
//     is built from the mocked score: the reference answer's sentences as claims, the first
//     round(score x sentences) attributed to passage 1, the rest not.
//
// Mastra's judge named no passages, so the answers name none either.
func Answer(scorer string, c corpus.MastraCase) (string, bool, error) {
	if c.Run == nil {
		return "", false, nil
	}
	var claims []grounding.Claim
	switch scorer {
	case "faithfulness", "hallucination_free":
		rec, err := c.Claims()
		if err != nil || rec == nil {
			return "", false, err
		}
		for _, v := range rec.Verdicts {
			label, err := translate(scorer, v)
			if err != nil {
				return "", false, fmt.Errorf("%s: %w", c.ID, err)
			}
			claims = append(claims, grounding.Claim{Claim: v.Text(), Verdict: label, Passages: []string{}, Reason: v.Reason})
		}
	case "context_recall":
		e := c.Mastra.Expected
		if e.Kind != "mocked_run" || e.Score == nil || strings.TrimSpace(c.Run.Expected) == "" {
			return "", false, nil
		}
		scale := 1.0
		if s, ok := c.Mastra.Options["scale"].(float64); ok && s > 0 {
			scale = s
		}
		sentences := grounding.Sentences(c.Run.Expected)
		yes := int(math.Round(*e.Score / scale * float64(len(sentences))))
		for i, s := range sentences {
			cl := grounding.Claim{Claim: s, Verdict: "not_attributed", Passages: []string{}, Reason: "from the score Mastra's test mocks"}
			if i < yes {
				cl.Verdict, cl.Passages = "attributed", []string{"1"}
			}
			claims = append(claims, cl)
		}
	case "context_relevance", "answer_similarity", "noise_robustness":
		return ratedAnswer(scorer, c)
	default:
		return "", false, fmt.Errorf("groundingtest: no answers for scorer %q", scorer)
	}
	if claims == nil {
		claims = []grounding.Claim{}
	}
	b, err := json.Marshal(map[string]any{"claims": claims})
	return string(b), true, err
}

func translate(scorer string, v corpus.MastraVerdict) (string, error) {
	verdict := strings.ToLower(strings.TrimSpace(v.Verdict))
	if scorer == "faithfulness" {
		switch verdict {
		case "yes":
			return "supported", nil
		case "no":
			return "contradicted", nil
		case "unsure":
			return "unverifiable", nil
		}
	} else {
		switch verdict {
		case "no":
			return "grounded", nil
		case "yes":
			if strings.Contains(strings.ToLower(v.Reason), "contradict") {
				return "contradicted", nil
			}
			return "unsupported", nil
		}
	}
	return "", fmt.Errorf("verdict %q has no %s reading", v.Verdict, scorer)
}

// Match is the part of scorer's prompt that shows c's run, unique to the run within a file.
func Match(scorer string, c corpus.MastraCase) string {
	if m, ok := ratedMatch(scorer, c); ok {
		return m
	}
	r := c.Run
	if scorer == "context_recall" {
		return grounding.PassagesText(r.Context) + "\n\nREFERENCE ANSWER:\n<reference>\n" + r.Expected + "\n</reference>"
	}
	return grounding.RunSection(r, r.Context)
}

// Rules loads scorer's cases from dir (testdata/) and returns a judgetest rule answering
// each case that has an answer, and those cases. Two cases whose prompts would match the
// same rule are an error.
func Rules(dir, scorer string) ([]judgetest.Rule, []corpus.MastraCase, error) {
	file, ok := Files[scorer]
	if !ok {
		return nil, nil, fmt.Errorf("groundingtest: no answers for scorer %q", scorer)
	}
	cases, err := corpus.LoadMastraGrounding(dir, file)
	if err != nil {
		return nil, nil, err
	}
	var rules []judgetest.Rule
	var answered []corpus.MastraCase
	seen := map[string]string{}
	for _, c := range cases {
		ans, ok, err := Answer(scorer, c)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		m := Match(scorer, c)
		if other, dup := seen[m]; dup {
			return nil, nil, fmt.Errorf("groundingtest: %s and %s show the judge the same run", other, c.ID)
		}
		seen[m] = c.ID
		rules = append(rules, judgetest.Rule{Match: m, Reply: ans})
		answered = append(answered, c)
	}
	return rules, answered, nil
}
