package noise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// ragasInstructions define Ragas' statements and checks in our words, with an invented
// example. Ragas asks for them one passage at a time; here one answer holds them all.
const ragasInstructions = `Check an AI agent's OUTPUT against a REFERENCE answer and the PASSAGES it was given, some of which may be noise.

1. Break the OUTPUT into statements, and the REFERENCE too. A statement is one claim that could be true or false on its own: split a sentence that says several things, and leave out greetings and questions.
2. For every statement, of the output and of the reference alike, list the ids of the passages that back it: a passage backs a statement when the statement follows from what the passage says. List none when no passage does.
3. For every statement of the output, say whether the REFERENCE backs it (in_reference): true when it follows from the reference, false when the reference contradicts it or says nothing of it.

Decide from the texts alone, not from what you know.

Example.
PASSAGES: [id 1] The bridge opened in 1932. [id 2] A blog claims the bridge opened in 1929.
REFERENCE: The bridge opened in 1932.
OUTPUT: The bridge opened in 1929 and is made of steel.
{"output_statements": [
 {"statement": "The bridge opened in 1929", "passages": ["2"], "in_reference": false},
 {"statement": "The bridge is made of steel", "passages": [], "in_reference": false}],
 "reference_statements": [{"statement": "The bridge opened in 1932", "passages": ["1"]}]}`

const ragasFormat = `Reply with JSON only, in this shape:
{"output_statements": [{"statement": "...", "passages": ["<passage id>"], "in_reference": true | false}], "reference_statements": [{"statement": "...", "passages": ["<passage id>"]}]}`

var ragasSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["output_statements","reference_statements"],"properties":{` +
	`"output_statements":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["statement","passages","in_reference"],"properties":{` +
	`"statement":{"type":"string"},"passages":{"type":"array","items":{"type":"string"}},"in_reference":{"type":"boolean"}}}},` +
	`"reference_statements":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["statement","passages"],"properties":{` +
	`"statement":{"type":"string"},"passages":{"type":"array","items":{"type":"string"}}}}}}}`)

// ragasPrompt is the user message: the instructions, the run, the answer format.
func ragasPrompt(run *sdk.Run, ps []sdk.Passage) string {
	var b strings.Builder
	b.WriteString(ragasInstructions)
	b.WriteString("\n\n")
	section(&b, "INPUT (what the agent was asked)", "input", run.Input)
	section(&b, "PASSAGES (what the agent was given, each in a tag with its id)", "passages", grounding.PassagesText(ps))
	section(&b, "REFERENCE (the right answer)", "reference", run.Expected)
	section(&b, "OUTPUT (what the agent said)", "output", run.Output)
	b.WriteString(ragasFormat)
	return b.String()
}

// statement is one statement and the passages that back it; InReference is set for the
// output's statements.
type statement struct {
	Statement   string   `json:"statement"`
	Passages    []string `json:"passages"`
	InReference bool     `json:"in_reference"`
	// Counted says whether the statement counts against the agent in the configured mode.
	Counted bool `json:"counted,omitempty"`
}

// ragasAnswer is the judge's answer, read loosely and then checked.
type ragasAnswer struct {
	Output *[]struct {
		Statement   string `json:"statement"`
		Passages    any    `json:"passages"`
		InReference any    `json:"in_reference"`
	} `json:"output_statements"`
	Reference []struct {
		Statement string `json:"statement"`
		Passages  any    `json:"passages"`
	} `json:"reference_statements"`
}

// sensitivity is Ragas' figure: the share of output statements that the reference does not
// back and that a relevant passage backs (mode relevant), or that only irrelevant passages
// back (mode irrelevant). A passage is relevant when it backs a reference statement. It
// marks the statements it counts and returns how many it counted.
func sensitivity(out, ref []statement, mode string) (float64, int) {
	relevant := map[string]bool{}
	for _, s := range ref {
		for _, id := range s.Passages {
			relevant[id] = true
		}
	}
	n := 0
	for i := range out {
		s := &out[i]
		byRelevant := slices.ContainsFunc(s.Passages, func(id string) bool { return relevant[id] })
		byIrrelevant := !byRelevant && slices.ContainsFunc(s.Passages, func(id string) bool { return !relevant[id] })
		wrong := !s.InReference
		if mode == ModeIrrelevant {
			s.Counted = wrong && byIrrelevant
		} else {
			s.Counted = wrong && byRelevant
		}
		if s.Counted {
			n++
		}
	}
	return float64(n) / float64(len(out)), n
}

// readRagas reads the judge's answer; passage ids the run does not have are dropped and
// returned.
func readRagas(content string, ids map[string]bool) (out, ref []statement, unknown []string, err error) {
	var ans ragasAnswer
	if err := verdict.Extract(content, &ans); err != nil {
		return nil, nil, nil, err
	}
	if ans.Output == nil {
		return nil, nil, nil, fmt.Errorf(`the judge's answer has no "output_statements" array (judge output: %s)`, textkit.Clip(content, 500))
	}
	keep := func(v any) []string {
		var kept []string
		for _, id := range passageIDs(v) {
			if ids[id] {
				kept = append(kept, id)
			} else {
				unknown = append(unknown, id)
			}
		}
		return kept
	}
	for i, s := range *ans.Output {
		text := strings.TrimSpace(s.Statement)
		if text == "" {
			continue
		}
		in, ok := readBool(s.InReference)
		if !ok {
			return nil, nil, nil, fmt.Errorf("output statement %d (%q): in_reference %s is not true or false (judge output: %s)",
				i+1, textkit.Clip(text, 80), show(s.InReference), textkit.Clip(content, 500))
		}
		out = append(out, statement{Statement: text, Passages: keep(s.Passages), InReference: in})
	}
	for _, s := range ans.Reference {
		if text := strings.TrimSpace(s.Statement); text != "" {
			ref = append(ref, statement{Statement: text, Passages: keep(s.Passages)})
		}
	}
	if len(ref) == 0 {
		return nil, nil, nil, errors.New("the judge found no statement in the reference, which is not blank; the passages' relevance cannot be told")
	}
	return out, ref, unknown, nil
}

// readBool reads a flag as judges write it: true/false, "yes"/"no".
func readBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes":
			return true, true
		case "false", "no":
			return false, true
		}
	}
	return false, false
}

// passageIDs reads the ids a judge listed: strings or numbers, "2" or "[2]".
func passageIDs(v any) []string {
	items, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil
		}
		items = []any{v}
	}
	var out []string
	for _, it := range items {
		var s string
		switch x := it.(type) {
		case string:
			s = x
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			s = show(x)
		}
		if s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "[]")); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ragas runs Ragas' method in one call: 1 - the noise sensitivity of the output.
func ragas(ctx context.Context, cfg Config, j sdk.Judge, run *sdk.Run, ev grounding.Evidence) sdk.Result {
	ex, content, err := judgekit.Ask(ctx, j, system, ragasPrompt(run, ev.Passages), ragasSchema)
	if err != nil {
		return ex.Fail(Name, err)
	}
	out, ref, unknown, err := readRagas(content, grounding.IDs(ev.Passages))
	if err != nil {
		return ex.Fail(Name, err)
	}
	flags := ev.Flags(unknown)
	if len(out) == 0 {
		ex.Parsed = map[string]any{"output_statements": out, "reference_statements": ref}
		return ex.Skipped(Name+": the output makes no statement to check against the reference and the passages (Ragas' figure is undefined)",
			append(flags, grounding.FlagNoClaims))
	}
	share, counted := sensitivity(out, ref, cfg.Mode)
	ex.Parsed = map[string]any{"output_statements": out, "reference_statements": ref, "unknown_passages": unknown}
	score := 1 - share
	res := ex.Scored(score, ragasReason(out, share, cfg.Mode), map[string]any{"method": MethodRagas, "mode": cfg.Mode,
		"output_statements": len(out), "counted": counted, "noise_sensitivity": share, "score": score})
	res.Flags = flags
	res.Dimensions = map[string]float64{DimRobustness: score, DimSensitivity: share}
	res.SkippedDimensions = map[string]string{}
	for _, a := range aspects {
		res.SkippedDimensions[a] = "the mastra method's impact rating"
	}
	return res
}

// ragasReason tells the figure from the statements.
func ragasReason(out []statement, share float64, mode string) string {
	var counted []string
	for _, s := range out {
		if s.Counted {
			counted = append(counted, strconv.Quote(textkit.Clip(s.Statement, 100)))
		}
	}
	which := "a relevant passage backs"
	if mode == ModeIrrelevant {
		which = "only irrelevant passages back"
	}
	r := fmt.Sprintf("%d of %d output statements are wrong (the reference does not back them) and %s them", len(counted), len(out), which)
	if len(counted) > 0 {
		if len(counted) > 3 {
			counted = append(counted[:3], fmt.Sprintf("and %d more", len(counted)-3))
		}
		r += ": " + strings.Join(counted, ", ")
	}
	return r + fmt.Sprintf("; noise sensitivity (%s) %.2f, robustness %.2f", mode, share, 1-share)
}
