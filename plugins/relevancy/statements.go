package relevancy

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// The statements mode follows Mastra's answer-relevancy scorer (@mastra/evals,
// scorers/llm/answer-relevancy): the same four steps, the same verdict labels, the same
// score formula and rounding, and an equivalent system prompt. The prompts are our own
// wording of Mastra's instructions.

const statementsSystem = `You evaluate answer relevancy in a balanced, nuanced way: you decide whether LLM outputs are relevant to their input, including partly relevant and uncertain cases.

Principles:
1. Judge whether the output addresses what the input asks for.
2. Consider direct answers and related context.
3. Put relevance to the input before correctness.
4. A response can be partly relevant.
5. Empty outputs and error messages are always "no".
6. A response that discusses the kind of information asked for is partly relevant.`

// Markers that start each statements-mode prompt (tests script the judge on them).
const (
	extractMarker = "Break the text below into meaningful statements"
	analyzeMarker = "Judge how relevant each statement is to the input"
	reasonMarker  = "Explain the relevancy score"
)

func extractPrompt(output string) string {
	return extractMarker + `, keeping context and relationships intact. Do not split too aggressively.

Split a compound statement when it:
- joins clauses with "and",
- holds several distinct facts or claims,
- gives several descriptions of its subject.

Special cases:
- a one-word answer is a complete statement;
- an error message is one statement;
- an empty text gives an empty list;
- keep related information together.

Example text: Look! A bird! Birds are an interesting animal.
{"statements": ["Look!", "A bird!", "Birds are interesting animals."]}

Return only JSON with a "statements" array; an empty input gives an empty array.

Text:
` + output + `

JSON:`
}

func analyzePrompt(input string, statements []string) string {
	quoted, _ := json.Marshal(input)
	return analyzeMarker + `: as a direct answer, as related context, or as an uncertain case.

Return JSON with a "results" array holding one object per statement, in order, each with:
- "result": "yes", "no" or "unsure"
- "reason": why

"yes": the statement directly and explicitly answers the input: it gives the specific answer asked for, states the relationship asked about, could stand alone as the answer, or gives the kind of answer the question calls for (a place for "where", a person for "who"). A statement that answers directly but wrongly is "unsure".

"unsure": the statement is partly relevant: it discusses the kind of information asked for, implies the answer without stating it, refers to the answer indirectly, mentions related entities or properties without tying them to the question, contains the answer but needs more context, or is wrong but shows the question was understood.

"no": the statement has no meaningful link to the question: it has neither the subject nor the kind of information asked for, is empty or meaningless, is a general or tangential fact about the subject that does not touch what is asked.

Do not judge whether a statement is true, only whether it is relevant. Mentioning the subject alone is not enough; the kind of information asked for matters more than the topic.

Examples of "no" for their inputs: "Japan has beautiful seasons" for "What is Japan's largest city?"; "Trees grow tall" for "How tall is Mount Everest?"; "The weather is nice" for "Who is the president?".

Example input: "What color is the sky during daytime?"
Statements: "The sky is blue during daytime", "The sky is full of clouds", "I had breakfast today", "The sky is purple during daytime"
{"results": [
  {"result": "yes", "reason": "it states the sky's daytime color"},
  {"result": "unsure", "reason": "it describes the sky but not its color"},
  {"result": "no", "reason": "breakfast has nothing to do with the sky"},
  {"result": "unsure", "reason": "wrong, but it answers the question asked"}
]}

There must be exactly one result per statement; no statements give an empty array.

Input:
` + string(quoted) + `

Number of statements: ` + fmt.Sprint(len(statements)) + `

Statements:
` + strings.Join(statements, "\n") + `

JSON:`
}

func reasonPrompt(input, output string, score float64, results []statementVerdict) string {
	rs, _ := json.Marshal(results)
	return reasonMarker + ` of the LLM's response, where 0 is the lowest and 1 the highest, from this context:
Input: ` + input + `
Output: ` + output + `
Score: ` + fmt.Sprint(score) + `
Results: ` + string(rs) + `

Rules:
- explain the score from the mix of direct answers and related context;
- consider full and partial relevance;
- be concise;
- use the given score, do not recompute it;
- do not judge factual correctness;
- explain what is relevant and what is not;
- if there are no results, say why;
- for mixed responses, explain the balance.

Reply with JSON: {"reason": "The score is <score> because <explanation>"}`
}

// statementVerdict is one verdict of the analyze step.
type statementVerdict struct {
	Result string `json:"result"`
	Reason string `json:"reason"`
}

// StatementScore is Mastra's answer-relevancy formula: (yes + uncertaintyWeight *
// unsure) / verdicts, 0 without verdicts. Results are compared trimmed and lower-cased.
// It returns the unrounded value; the host applies the scale and rounds to two decimals
// as Mastra's roundToTwoDecimals(score * scale) does.
func StatementScore(results []string, uncertaintyWeight float64) float64 {
	if len(results) == 0 {
		return 0
	}
	var sum float64
	for _, r := range results {
		switch strings.ToLower(strings.TrimSpace(r)) {
		case "yes":
			sum++
		case "unsure":
			sum += uncertaintyWeight
		}
	}
	return sum / float64(len(results))
}

// RoundMastra is Mastra's roundToTwoDecimals: Math.round((x + Number.EPSILON) * 100) / 100.
func RoundMastra(x float64) float64 {
	const epsilon = 2.220446049250313e-16
	return math.Floor((x+epsilon)*100+0.5) / 100
}

// statements runs Mastra's four steps.
func (p *pipeline) statements(uncertaintyWeight float64) sdk.Result {
	// preprocess
	prompt := extractPrompt(p.run.Output)
	var extracted struct {
		Statements []string `json:"statements"`
	}
	if res, ok := p.askJSON("preprocess", statementsSystem, prompt, &extracted); !ok {
		return res
	}
	if extracted.Statements == nil {
		extracted.Statements = []string{}
	}
	p.step("preprocess", prompt, extracted)

	// analyze
	var analyzed struct {
		Results []statementVerdict `json:"results"`
	}
	if len(extracted.Statements) > 0 {
		prompt = analyzePrompt(p.run.Input, extracted.Statements)
		if res, ok := p.askJSON("analyze", statementsSystem, prompt, &analyzed); !ok {
			return res
		}
	}
	if analyzed.Results == nil {
		analyzed.Results = []statementVerdict{}
	}
	p.step("analyze", prompt, analyzed)

	// generateScore
	labels := make([]string, len(analyzed.Results))
	for i, r := range analyzed.Results {
		labels[i] = r.Result
	}
	score := StatementScore(labels, uncertaintyWeight)
	p.step("generateScore", "", map[string]any{
		"score": score, "rounded": RoundMastra(score), "verdicts": len(labels),
		"statements": len(extracted.Statements), "uncertainty_weight": uncertaintyWeight,
	})
	var flags []string
	if len(labels) != len(extracted.Statements) {
		flags = append(flags, FlagVerdictCountMismatch)
	}

	// generateReason
	prompt = reasonPrompt(p.run.Input, p.run.Output, RoundMastra(score), analyzed.Results)
	resp, err := p.ask(statementsSystem, prompt, 0)
	reason := ""
	if err == nil {
		var r struct {
			Reason string `json:"reason"`
		}
		if verdict.Extract(resp.Content, &r) == nil && r.Reason != "" {
			reason = r.Reason
		} else {
			// Mastra's reason step returns plain text; take it as it is.
			reason = strings.TrimSpace(resp.Content)
		}
		p.step("generateReason", prompt, map[string]any{"reason": reason})
	} else {
		p.step("generateReason", prompt, map[string]any{"error": err.Error()})
	}
	if reason == "" {
		// The score stands without a reason: the verdicts that make it are recorded.
		flags = append(flags, FlagReasonUnavailable)
		reason = fmt.Sprintf("%d of %d statements judged relevant (%d unsure)", count(labels, "yes"), len(labels), count(labels, "unsure"))
	}
	return p.scored(score, reason, flags...)
}

func count(labels []string, want string) int {
	n := 0
	for _, l := range labels {
		if strings.ToLower(strings.TrimSpace(l)) == want {
			n++
		}
	}
	return n
}
