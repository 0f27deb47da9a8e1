package groundingtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding"
)

// The scorers whose answer is not a list of claims: context_relevance rates passages,
// answer_similarity matches units, noise_robustness rates the noise's impact. Their answers
// are built here from what Mastra's judge said where it recorded something, and their
// matches from the part of each scorer's prompt that shows the run (their prompts are the
// scorers' own; a change there shows as a request no rule answers).

// ratedAnswer is Answer for context_relevance, answer_similarity and noise_robustness.
//
//   - context_relevance: Mastra's evaluations (recorded, or given to its generateScore) by
//     passage index become ratings by id (index + 1, as the host numbers passages);
//   - answer_similarity: Mastra's recorded matches, contradictions and extra units, for the
//     cases with a reference and Mastra's default weights (a case with its own weights is a
//     formula check in plugins/similarity, not a run to replay with the defaults);
//   - noise_robustness: Mastra's tests mock this scorer and record nothing, so the answer is
//     built from the mocked score: the judge's robustness is that score, every aspect's
//     impact the level whose weight is nearest (within the discrepancy threshold, so the
//     score is the mocked one), no major issue.
func ratedAnswer(scorer string, c corpus.MastraCase) (string, bool, error) {
	r := c.Run
	switch scorer {
	case "context_relevance":
		raw := c.Recorded
		if len(raw) == 0 || string(raw) == "null" {
			raw = c.Given
		}
		var rec struct {
			Analysis *relevanceAnalysis `json:"analysis"`
			Given    *relevanceAnalysis `json:"analyzeStepResult"`
		}
		if len(raw) == 0 || string(raw) == "null" || len(r.Context) == 0 {
			return "", false, nil
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return "", false, fmt.Errorf("%s: %w", c.ID, err)
		}
		a := rec.Analysis
		if a == nil {
			a = rec.Given
		}
		if a == nil {
			return "", false, nil
		}
		type rating struct {
			ID        string `json:"id"`
			Relevance string `json:"relevance"`
			Used      bool   `json:"used"`
			Reason    string `json:"reason"`
		}
		ratings := []rating{}
		for _, e := range a.Evaluations {
			if e.ContextIndex < 0 || e.ContextIndex >= len(r.Context) {
				return "", false, fmt.Errorf("%s: context_index %d of %d passages", c.ID, e.ContextIndex, len(r.Context))
			}
			ratings = append(ratings, rating{r.Context[e.ContextIndex].ID, e.RelevanceLevel, e.WasUsed, e.Reasoning})
		}
		missing := append([]string{}, a.MissingContext...)
		b, err := json.Marshal(map[string]any{"passages": ratings, "missing": missing})
		return string(b), true, err
	case "answer_similarity":
		if strings.TrimSpace(r.Expected) == "" || len(c.Recorded) == 0 || string(c.Recorded) == "null" {
			return "", false, nil
		}
		for _, k := range []string{"semanticThreshold", "exactMatchBonus", "missingPenalty", "contradictionPenalty", "extraInfoPenalty", "scale"} {
			if _, own := c.Mastra.Options[k]; own {
				return "", false, nil
			}
		}
		var rec struct {
			Analysis struct {
				Matches []struct {
					GroundTruthUnit string `json:"groundTruthUnit"`
					OutputUnit      any    `json:"outputUnit"`
					MatchType       string `json:"matchType"`
					Explanation     string `json:"explanation"`
				} `json:"matches"`
				ExtraInOutput  []string `json:"extraInOutput"`
				Contradictions []struct {
					OutputUnit      string `json:"outputUnit"`
					GroundTruthUnit string `json:"groundTruthUnit"`
					Explanation     string `json:"explanation"`
				} `json:"contradictions"`
			} `json:"analysis"`
		}
		if err := json.Unmarshal(c.Recorded, &rec); err != nil {
			return "", false, fmt.Errorf("%s: %w", c.ID, err)
		}
		units := []map[string]any{}
		for _, m := range rec.Analysis.Matches {
			units = append(units, map[string]any{"unit": m.GroundTruthUnit, "match": m.MatchType, "output_unit": m.OutputUnit, "note": m.Explanation})
		}
		contradictions := []map[string]string{}
		for _, x := range rec.Analysis.Contradictions {
			contradictions = append(contradictions, map[string]string{"output_unit": x.OutputUnit, "expected_unit": x.GroundTruthUnit, "note": x.Explanation})
		}
		extra := append([]string{}, rec.Analysis.ExtraInOutput...)
		b, err := json.Marshal(map[string]any{"expected_units": units, "contradictions": contradictions, "extra_output_units": extra})
		return string(b), true, err
	case "noise_robustness":
		e := c.Mastra.Expected
		if e.Kind != "mocked_run" || e.Score == nil || strings.TrimSpace(r.Output) == "" {
			return "", false, nil
		}
		level := nearestImpact(*e.Score)
		out := map[string]any{"major_issues": []string{}, "robustness": *e.Score}
		for _, a := range []string{"content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance"} {
			out[a] = map[string]string{"impact": level, "change": "from the score Mastra's test mocks"}
		}
		b, err := json.Marshal(out)
		return string(b), true, err
	}
	return "", false, fmt.Errorf("groundingtest: no answers for scorer %q", scorer)
}

// relevanceAnalysis is Mastra's context-relevance analysis.
type relevanceAnalysis struct {
	Evaluations []struct {
		ContextIndex   int    `json:"context_index"`
		RelevanceLevel string `json:"relevanceLevel"`
		WasUsed        bool   `json:"wasUsed"`
		Reasoning      string `json:"reasoning"`
	} `json:"evaluations"`
	MissingContext []string `json:"missingContext"`
}

// nearestImpact is the impact level whose weight in Mastra's defaults is nearest score.
func nearestImpact(score float64) string {
	levels := []struct {
		name   string
		weight float64
	}{{"none", 1}, {"minimal", 0.85}, {"moderate", 0.6}, {"significant", 0.3}, {"severe", 0.1}}
	best := levels[0]
	for _, l := range levels[1:] {
		if d := score - l.weight; d*d < (score-best.weight)*(score-best.weight) {
			best = l
		}
	}
	return best.name
}

// ratedMatch is Match for context_relevance, answer_similarity and noise_robustness: the
// part of the scorer's prompt that shows the run.
func ratedMatch(scorer string, c corpus.MastraCase) (string, bool) {
	r := c.Run
	switch scorer {
	case "context_relevance":
		return "<input>\n" + strings.TrimSpace(r.Input) + "\n</input>\n\nPASSAGES (what retrieval returned, each in a tag with its id):\n" +
			grounding.PassagesText(r.Context), true
	case "answer_similarity":
		return "<reference>\n" + strings.TrimSpace(r.Expected) + "\n</reference>\n\nOUTPUT (what the agent said):\n<output>\n" +
			strings.TrimSpace(r.Output) + "\n</output>", true
	case "noise_robustness":
		md, _ := r.Metadata["noise"].(map[string]any)
		text := func(k string) string { s, _ := md[k].(string); return strings.TrimSpace(s) }
		var b strings.Builder
		if t := text("type"); t != "" {
			b.WriteString("NOISE TYPE: " + t + "\n\n")
		}
		section := func(title, tag, body string) {
			b.WriteString(title + ":\n<" + tag + ">\n" + body + "\n</" + tag + ">\n\n")
		}
		if clean := text("clean_input"); clean != "" {
			section("CLEAN INPUT (the request without the noise)", "clean_input", clean)
		}
		section("NOISY INPUT (what the agent was given, noise and all)", "noisy_input", strings.TrimSpace(r.Input))
		section("BASELINE ANSWER (the agent's answer to the clean request)", "baseline_answer", text("baseline_output"))
		section("NOISY ANSWER (what the agent said under noise)", "noisy_answer", strings.TrimSpace(r.Output))
		return b.String(), true
	}
	return "", false
}
