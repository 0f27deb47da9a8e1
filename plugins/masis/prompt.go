package masis

import (
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// The host's citation caps, repeated to the judge so that its scores already obey them.
// The host enforces them whatever the judge says.
const (
	capHallucination = 0.4
	capUncited5      = 0.5
	capUncited10     = 0.3
)

// maxEvidence caps the evidence text sent to the judge, in bytes; passages past it are cut
// and the prompt says so.
const maxEvidence = 48 << 10

const system = "You are a strict evaluator of answers produced by an AI agent. You grade four " +
	"dimensions on a scale from 0 to 1 and reply with one JSON object and nothing else."

const rubric = `Evaluate the agent's answer. Be strict: give 1 only when the anchor for 1 is fully met, never by default; when the answer sits between two anchors, give a value between them, and when in doubt choose the lower one. Judge only what is in the answer, the question and the evidence below.

Rubric, from 0 to 1:
- faithfulness: is every claim in the answer supported by the evidence?
  1 = every claim is supported by the evidence, and every citation points at a passage that says what the claim says.
  0.5 = the main claims are supported, but some details are unsupported, uncited, or cited to the wrong passage.
  0 = the main claims are unsupported by or contradict the evidence, or the answer cites evidence that does not exist.
- relevance: does the answer do what the question or task asked?
  1 = it directly answers or performs exactly what was asked; a short correct answer is fully relevant.
  0.5 = it addresses the topic but answers only in part, or buries the answer in unrelated material.
  0 = it answers another question, refuses a reasonable request, or is off-topic.
- completeness: does the answer cover everything that was asked?
  1 = every part of the question is answered with the details it needs.
  0.5 = some parts or needed details are missing.
  0 = most of what was asked is missing.
- reasoning_quality: is the reasoning sound and clearly organized?
  1 = every step is correct and follows, and the conclusion matches the evidence.
  0.5 = the reasoning has gaps, unsupported leaps or minor errors.
  0 = the reasoning is wrong, contradictory, or absent where it is needed.

The agent may have acted through tools. Its actions (the tools it called, with their arguments and what each returned) are part of its answer: a task performed through calls whose results show it done is answered, even with no text, and completes the requested action. A call whose result is an error did not perform its action, unless a later call did; an answer that claims a success the results do not show is unsupported.`

// Prompt returns the system and user messages of the judge call for run: the rubric, the
// audit's hard constraints, then the question, the agent's actions (tool calls and their
// results) when it took any, the answer and the evidence, in that order.
func Prompt(run *sdk.Run) (string, string) {
	var b strings.Builder
	b.WriteString(rubric)
	b.WriteString("\n")
	if run.CitationAudit != nil {
		if cs := constraints(run.CitationAudit, len(run.Context) > 0); len(cs) > 0 {
			b.WriteString("\nHard constraints. A deterministic citation audit of the answer found the facts below. They are not opinions: your scores must obey them.\n")
			for _, c := range cs {
				b.WriteString("- " + c + "\n")
			}
		}
	}
	if p := run.Purpose(); p != "" {
		section(&b, "agent_purpose", "What the agent is for (a response that does this job is relevant even if it does not restate the input)", p)
	}
	section(&b, "question", "The question or task the agent was given", run.Input)
	if actions := run.ToolCallsText(); actions != "" {
		section(&b, "actions", "The tools the agent called, in order, and what each returned", actions)
	}
	answer := run.Output
	if strings.TrimSpace(answer) == "" && len(run.ToolCalls) > 0 {
		answer = "(no text: the agent answered through its actions alone)"
	}
	section(&b, "answer", "The agent's answer", answer)
	if len(run.Context) > 0 {
		section(&b, "evidence", "The evidence the agent retrieved, one passage per [id]", evidence(run.Context))
	} else {
		b.WriteString("\nEvidence: none was retrieved. Do not grade faithfulness: set \"faithfulness\" to null. Grade the other dimensions on the question and the answer alone.\n")
	}
	if run.Expected != "" {
		section(&b, "reference_answer", "A reference answer, for completeness and relevance", run.Expected)
	}
	faith := "0.0"
	if len(run.Context) == 0 {
		faith = "null"
	}
	fmt.Fprintf(&b, "\nReply with only this JSON object, every score a number from 0 to 1:\n"+
		`{"faithfulness": %s, "relevance": 0.0, "completeness": 0.0, "reasoning_quality": 0.0, "overall_score": 0.0, "improvement_suggestions": ["one concrete change that would raise the lowest score"]}`+
		"\noverall_score is 0.35*faithfulness + 0.25*relevance + 0.25*completeness + 0.15*reasoning_quality (without evidence, the same weights over the other three).\n", faith)
	return system, b.String()
}

// section writes one delimited block of content.
func section(b *strings.Builder, tag, title, text string) {
	fmt.Fprintf(b, "\n%s:\n<%s>\n%s\n</%s>\n", title, tag, strings.TrimSpace(text), tag)
}

// evidence renders the passages as "[id] text", cut at maxEvidence bytes.
func evidence(ps []sdk.Passage) string {
	var b strings.Builder
	for i, p := range ps {
		id := p.ID
		if id == "" {
			id = fmt.Sprint(i + 1)
		}
		line := fmt.Sprintf("[%s] %s\n", id, strings.TrimSpace(p.Text))
		if b.Len()+len(line) > maxEvidence {
			fmt.Fprintf(&b, "(%d more passages not shown: the evidence exceeds %d KiB)\n", len(ps)-i, maxEvidence>>10)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}

// constraints turns an audit into the hard constraints the judge must obey, with the caps
// they imply. Without evidence faithfulness is not graded, so no cap is stated.
func constraints(a *sdk.CitationAudit, evidence bool) []string {
	capf := func(c float64) string {
		if !evidence {
			return ""
		}
		return fmt.Sprintf(" Faithfulness must be at most %.1f.", c)
	}
	var out []string
	if len(a.InvalidCitations) > 0 {
		out = append(out, fmt.Sprintf("The answer cites ids that match no evidence passage: %s. Citing evidence that does not exist is a hallucination.%s",
			strings.Join(bracket(a.InvalidCitations), ", "), capf(capHallucination)))
	}
	if len(a.UnsupportedCitations) > 0 {
		out = append(out, fmt.Sprintf("These citations point at a passage that does not contain what the sentence claims (id: finding): %s. A claim cited to the wrong passage is unsupported.%s",
			strings.Join(a.UnsupportedCitations, "; "), capf(capHallucination)))
	}
	if a.HallucinationDetected && len(a.InvalidCitations) == 0 && len(a.UnsupportedCitations) == 0 {
		out = append(out, "The audit detected a hallucination in the citations."+capf(capHallucination))
	}
	switch u := a.UncitedSentences; {
	case u >= 10:
		out = append(out, fmt.Sprintf("%d of the answer's %d claims carry no citation.%s", u, a.Sentences, capf(capUncited10)))
	case u >= 5:
		out = append(out, fmt.Sprintf("%d of the answer's %d claims carry no citation.%s", u, a.Sentences, capf(capUncited5)))
	case u > 0:
		out = append(out, fmt.Sprintf("%d of the answer's %d claims carry no citation; judge whether the evidence supports them anyway.", u, a.Sentences))
	}
	return out
}

// findings summarizes an audit for the result's reason.
func findings(a *sdk.CitationAudit) []string {
	var out []string
	if len(a.InvalidCitations) > 0 {
		out = append(out, "invalid citation ids "+strings.Join(bracket(a.InvalidCitations), ", "))
	}
	if n := len(a.UnsupportedCitations); n > 0 {
		out = append(out, fmt.Sprintf("%d citation(s) to a passage that does not support the claim", n))
	}
	if a.UncitedSentences > 0 {
		out = append(out, fmt.Sprintf("%d of %d claims uncited", a.UncitedSentences, a.Sentences))
	}
	return out
}

func bracket(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "[" + id + "]"
	}
	return out
}
