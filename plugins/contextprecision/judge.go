package contextprecision

import (
	"context"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

const system = "You evaluate retrieval for a question-answering system. You judge each retrieved " +
	"passage on one thing: was it useful for producing the reference answer? Answer only with JSON."

// judgePrompt asks for one verdict per passage in Mastra's shape.
func judgePrompt(question, reference string, ps []sdk.Passage) string {
	var b strings.Builder
	b.WriteString("For each context passage below, decide whether it was useful for producing the reference answer to the question.\n")
	b.WriteString("A passage is useful (\"yes\") when it contains information that the reference answer uses or that directly supports it. ")
	b.WriteString("It is not useful (\"no\") when it is off-topic, only loosely related, or adds nothing the answer needs. Judge every passage on its own; do not let its position influence you.\n\n")
	fmt.Fprintf(&b, "Question:\n%s\n\nReference answer:\n%s\n\nContext passages (%d):\n", question, reference, len(ps))
	for i, p := range ps {
		fmt.Fprintf(&b, "[context_index %d] %s\n", i, p.Text)
	}
	fmt.Fprintf(&b, "\nReturn exactly %d verdicts, one per passage, with context_index 0 to %d in order:\n", len(ps), len(ps)-1)
	b.WriteString(`{"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "..."}]}`)
	return b.String()
}

type judgeVerdict struct {
	ContextIndex int    `json:"context_index"`
	Verdict      string `json:"verdict"`
	Reason       string `json:"reason"`
}

type judgeAnswer struct {
	Verdicts []judgeVerdict `json:"verdicts"`
}

// judgeVerdicts makes the one judge call of Mastra's method, with one repair prompt when the
// verdicts do not match the passages. A failed result is returned in the second value.
func (s *scorer) judgeVerdicts(ctx context.Context, j sdk.Judge, question, reference string, ps []sdk.Passage) ([]bool, sdk.Result) {
	var res sdk.Result
	prompt := judgePrompt(question, reference, ps)
	attempts := 1
	if s.cfg.Repair {
		attempts = 2
	}
	var problem string
	for attempt := 0; attempt < attempts; attempt++ {
		name := "analyze"
		if attempt > 0 {
			name = "analyze_repair"
			prompt = judgePrompt(question, reference, ps) + "\n\nYour previous answer was invalid: " + problem +
				fmt.Sprintf(". Return exactly %d verdicts with context_index 0 to %d.", len(ps), len(ps)-1)
		}
		out, err := sdk.Ask(ctx, j, system, prompt)
		if err != nil {
			return nil, sdk.Failed(sdk.CodeJudgeError, "context precision judge call failed: "+err.Error())
		}
		var ans judgeAnswer
		if err := verdict.Extract(out.Content, &ans); err != nil {
			res.Steps = append(res.Steps, step(name, prompt, map[string]string{"raw": out.Content}))
			problem = "not the JSON object asked for: " + err.Error()
			continue
		}
		res.Steps = append(res.Steps, step(name, prompt, ans))
		v, perr := orderVerdicts(ans.Verdicts, len(ps))
		if perr == "" {
			return v, res
		}
		problem = perr
	}
	f := sdk.Failed(sdk.CodeJudgeError, "context precision judge returned unusable verdicts: "+problem)
	f.Steps = res.Steps
	return nil, f
}

// orderVerdicts checks that there is exactly one verdict per passage index and returns
// them in passage order; the string names the mismatch when there is one.
func orderVerdicts(vs []judgeVerdict, n int) ([]bool, string) {
	if len(vs) != n {
		return nil, fmt.Sprintf("%d verdicts for %d passages", len(vs), n)
	}
	out := make([]bool, n)
	seen := make([]bool, n)
	for _, v := range vs {
		if v.ContextIndex < 0 || v.ContextIndex >= n {
			return nil, fmt.Sprintf("context_index %d out of range 0..%d", v.ContextIndex, n-1)
		}
		if seen[v.ContextIndex] {
			return nil, fmt.Sprintf("context_index %d given twice", v.ContextIndex)
		}
		seen[v.ContextIndex] = true
		yes, ok := judgekit.YesNo(v.Verdict)
		if !ok {
			return nil, fmt.Sprintf("verdict %q for context_index %d: want yes or no", v.Verdict, v.ContextIndex)
		}
		out[v.ContextIndex] = yes
	}
	return out, ""
}

// passagePrompt is Ragas' per-passage verification prompt.
func passagePrompt(question, reference, passage string) string {
	return "Given the question, the answer and one context passage, verify whether the passage was useful in arriving at the answer. " +
		"Give the verdict 1 if it was useful and 0 if not.\n\n" +
		"Question:\n" + question + "\n\nAnswer:\n" + reference + "\n\nContext:\n" + passage +
		"\n\nRespond with JSON: {\"reason\": \"...\", \"verdict\": 1}"
}

type passageAnswer struct {
	Reason  string `json:"reason"`
	Verdict any    `json:"verdict"`
}

// perPassageVerdicts sends one request per passage as a single batch.
func perPassageVerdicts(ctx context.Context, j sdk.Judge, question, reference string, ps []sdk.Passage) ([]bool, sdk.Result) {
	var res sdk.Result
	reqs := make([]sdk.CompletionRequest, len(ps))
	prompts := make([]string, len(ps))
	for i, p := range ps {
		prompts[i] = passagePrompt(question, reference, p.Text)
		reqs[i] = sdk.CompletionRequest{JSON: true, Messages: []sdk.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: prompts[i]},
		}}
	}
	outs, err := j.Complete(ctx, reqs)
	if err != nil {
		return nil, sdk.Failed(sdk.CodeJudgeError, "context precision judge batch failed: "+err.Error())
	}
	if len(outs) != len(reqs) {
		return nil, sdk.Failed(sdk.CodeJudgeError, fmt.Sprintf("judge returned %d responses for %d requests", len(outs), len(reqs)))
	}
	verdicts := make([]bool, len(ps))
	for i, out := range outs {
		name := fmt.Sprintf("analyze[%d]", i)
		if out.Error != nil {
			f := sdk.Failed(sdk.CodeJudgeError, fmt.Sprintf("judge call for passage %s failed: %s", ps[i].ID, out.Error.Message))
			f.Steps = res.Steps
			return nil, f
		}
		var ans passageAnswer
		if err := verdict.Extract(out.Content, &ans); err != nil {
			f := sdk.Failed(sdk.CodeJudgeError, fmt.Sprintf("judge verdict for passage %s is not JSON: %v", ps[i].ID, err))
			f.Steps = append(res.Steps, step(name, prompts[i], map[string]string{"raw": out.Content}))
			return nil, f
		}
		yes, ok := judgekit.YesNo(fmt.Sprint(ans.Verdict))
		if !ok {
			f := sdk.Failed(sdk.CodeJudgeError, fmt.Sprintf("judge verdict for passage %s is %v: want 0 or 1", ps[i].ID, ans.Verdict))
			f.Steps = append(res.Steps, step(name, prompts[i], ans))
			return nil, f
		}
		verdicts[i] = yes
		res.Steps = append(res.Steps, step(name, prompts[i], ans))
	}
	return verdicts, res
}
