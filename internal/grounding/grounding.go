// Package grounding holds what the claim-based grounding scorers share (faithfulness,
// hallucination_free and context_recall in plugins/): where a run's passages come from,
// how they are shown to the judge, the one structured judge call each scorer makes, the
// claim answer and its reading with sdk/verdict, the steps a result records and the
// reason composed from the verdicts.
//
// Each of those scorers asks the judge once: the claims and their verdicts come back in one
// structured answer ([Claim]), and the reason a person reads is written here from the
// verdicts, never asked for. Mastra's scorers make three calls for the same (extract,
// analyze, reason).
//
// The package depends on the standard library, the sdk and the pre-screen's checks only:
// it compiles into the WASM build of the built-ins.
package grounding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// Flags the grounding scorers set.
const (
	// FlagContextFromTools: the run has no context passages, so the results of its tool
	// calls were the evidence (as Mastra's faithfulness scorer reads a run's tool results).
	FlagContextFromTools = "context_from_tools"
	// FlagUnknownPassage: the judge named a passage id the run does not have; the id was
	// dropped from that claim and the verdict kept.
	FlagUnknownPassage = "unknown_passage"
	// FlagNoClaims: the output states nothing that could be checked against the passages
	// (empty, a question back, a greeting); the result is skipped.
	FlagNoClaims = "no_claims"
	// FlagEmptyOutput: the output is empty (the pre-screen's flag).
	FlagEmptyOutput = prescreen.FlagEmptyOutput
	// FlagErrorText: the output is an error message, not an answer (the pre-screen's flag).
	FlagErrorText = prescreen.FlagErrorText
	// FlagToolError: the turn's only output is tool calls that all failed (the
	// pre-screen's flag).
	FlagToolError = prescreen.FlagToolError
)

// Evidence is the passages a run is checked against and where they came from.
type Evidence struct {
	// Passages, in order, each with an id.
	Passages []sdk.Passage
	// Source names where they came from: "run.context", "metadata.PATH" or "tool results".
	Source string
	// FromTools is true when the run had no passages and its tool results stand in.
	FromTools bool
}

// Gather returns the passages of run: metadata.PATH when contextPath is set, else
// run.context; when that holds none, the results of the run's tool calls that did not fail,
// with ids "tool:<call id>" ("tool:<n>" for a call without an id). A value at contextPath
// that is not a list of passages is an error naming the path.
func Gather(run *sdk.Run, contextPath string) (Evidence, error) {
	ev := Evidence{Passages: run.Context, Source: "run.context"}
	if contextPath != "" {
		ev.Source = "metadata." + contextPath
		ev.Passages = nil
		if v, ok := lookup(run.Metadata, contextPath); ok {
			ps, err := toPassages(v)
			if err != nil {
				return Evidence{}, fmt.Errorf("%s: %w", ev.Source, err)
			}
			ev.Passages = ps
		}
	}
	if len(ev.Passages) > 0 {
		return ev, nil
	}
	if ps := toolPassages(run.ToolCalls); len(ps) > 0 {
		return Evidence{Passages: ps, Source: "tool results", FromTools: true}, nil
	}
	return ev, nil
}

// toolPassages turns the results of the calls that returned something and did not fail
// into passages.
func toolPassages(calls []sdk.ToolCall) []sdk.Passage {
	var out []sdk.Passage
	seen := map[string]bool{}
	for i, c := range calls {
		if strings.TrimSpace(c.Result) == "" || prescreen.ToolCallFailed(c) {
			continue
		}
		id := c.ID
		if id == "" || seen[id] {
			id = strconv.Itoa(i + 1)
		}
		seen[id] = true
		name := c.Name
		if name == "" {
			name = "a tool"
		}
		out = append(out, sdk.Passage{ID: "tool:" + id, Text: name + " returned: " + c.Result})
	}
	return out
}

// lookup follows a dotted path through nested JSON objects.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// toPassages converts a decoded JSON array of strings or {id, text} objects, numbering
// those without an id by position.
func toPassages(v any) ([]sdk.Passage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var ps []sdk.Passage
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("want an array of strings or {\"id\", \"text\"} objects: %w", err)
	}
	for i := range ps {
		if ps[i].ID == "" {
			ps[i].ID = strconv.Itoa(i + 1)
		}
	}
	return ps, nil
}

// NoPassages is the skipped result of a scorer that checks claims against passages and
// found none; what names what the scorer checks ("faithfulness checks the output's claims").
func NoPassages(what string, ev Evidence) sdk.Result {
	fix := "record the retrieved passages in run.context"
	if strings.HasPrefix(ev.Source, "metadata.") {
		fix = "put the retrieved passages at " + ev.Source + " (the config's context_path) or in run.context"
	}
	return sdk.Skipped(what + " against the passages the agent retrieved, and the run has none (no " + ev.Source +
		", no tool results); " + fix + "; no judge call was made")
}

// CheckOutput returns the skipped result for an output that has no claim to check, without
// a judge call: a turn whose only output is tool calls, an empty output, an error message
// where an answer should be. ok is false when the output is text to check.
func CheckOutput(run *sdk.Run, scorer string) (res sdk.Result, ok bool) {
	if prescreen.ToolOnly(run) {
		res = sdk.Skipped(scorer + " checks the claims of the output's text, and this turn's only output is its tool calls: " +
			"there is no text to check; no judge call was made")
		if flag, _, bad := prescreen.Unanswered(run); bad {
			res.Flags = []string{flag}
		}
		return res, true
	}
	flag, why, bad := prescreen.Unanswered(run)
	if !bad {
		return sdk.Result{}, false
	}
	if flag == FlagEmptyOutput {
		res = sdk.Skipped(scorer + ": the output is empty, so it makes no claim to check against the passages; no judge call was made")
		res.Flags = []string{FlagNoClaims, FlagEmptyOutput}
		return res, true
	}
	res = sdk.Skipped(scorer + ": " + why + "; it states nothing about the passages to check (relevancy scores it 0); no judge call was made")
	res.Flags = []string{flag}
	return res, true
}

// PassagesText renders passages for a judge's prompt, each in a tag with its id.
func PassagesText(ps []sdk.Passage) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(`<passage id="` + p.ID + `">` + "\n" + p.Text + "\n</passage>")
	}
	return b.String()
}

// Exchange is one judge call and what was read from it, for a result's steps and
// telemetry.
type Exchange struct {
	// Prompt is what was sent: the system message, a blank line, the user message.
	Prompt string
	// Raw is the judge's answer as returned; nil before one came.
	Raw *string
	// Parsed is what was read from it, recorded in the step.
	Parsed any
	// Telemetry is what the scorer can see of the call's cost; the host's broker replaces
	// it with its own counts when it meters the call.
	Telemetry sdk.Telemetry
}

// Ask sends one request asking for JSON in the shape of schema (structured output where the
// endpoint offers it) and returns the answer's content. A failed request, an answer cut
// off at the token limit, or a batch error is an error; the exchange records it.
func Ask(ctx context.Context, j sdk.Judge, system, user string, schema json.RawMessage) (*Exchange, string, error) {
	ex := &Exchange{Prompt: system + "\n\n" + user}
	req := sdk.CompletionRequest{
		Messages: []sdk.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		JSON:     true,
		Schema:   schema,
	}
	out, err := j.Complete(ctx, []sdk.CompletionRequest{req})
	if err != nil {
		return ex, "", err
	}
	if len(out) != 1 {
		return ex, "", &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf("judge returned %d responses for 1 request", len(out))}
	}
	r := out[0]
	if r.Cached {
		ex.Telemetry.CacheHits++
	} else if r.Error == nil {
		ex.Telemetry.JudgeCalls++
	}
	ex.Telemetry.PromptTokens += r.PromptTokens
	ex.Telemetry.CompletionTokens += r.CompletionTokens
	if r.Error != nil {
		return ex, "", r.Error
	}
	ex.Raw = &r.Content
	if r.FinishReason == "length" {
		return ex, r.Content, fmt.Errorf("the judge's answer was cut off at its token limit; raise the judge's max tokens (judge output: %s)", Clip(r.Content, 500))
	}
	return ex, r.Content, nil
}

// Step is the exchange as the result's "judge" step.
func (ex *Exchange) Step() sdk.Step {
	out := map[string]any{}
	if ex.Raw != nil {
		out["raw"] = *ex.Raw
	}
	if ex.Parsed != nil {
		out["parsed"] = ex.Parsed
	}
	var raw json.RawMessage
	if len(out) > 0 {
		raw, _ = json.Marshal(out)
	}
	return sdk.Step{Name: "judge", Prompt: ex.Prompt, Output: raw}
}

// Fail is the failed result for err, with the exchange so far: err's code when it carries
// one (timeout, limit_exceeded ...), judge_error otherwise: the judge answered, but not
// usably.
func (ex *Exchange) Fail(scorer string, err error) sdk.Result {
	code, msg := sdk.CodeJudgeError, err.Error()
	var e *sdk.Error
	if errors.As(err, &e) {
		code, msg = e.Code, e.Message
	}
	res := sdk.Failed(code, scorer+": "+msg)
	res.Steps = []sdk.Step{ex.Step()}
	res.Telemetry = ex.Telemetry
	return res
}

// Claim is one claim and its verdict, as the judge answers it.
type Claim struct {
	// Claim is the statement, in the judge's words.
	Claim string `json:"claim"`
	// Verdict is one of the scorer's labels.
	Verdict string `json:"verdict"`
	// Passages are the ids of the passages that back or contradict the claim.
	Passages []string `json:"passages"`
	// Reason is the judge's one-sentence reason.
	Reason string `json:"reason"`
}

// ClaimsSchema is the JSON Schema of an answer {"claims": [Claim...]} whose verdicts are
// labels, strict-mode friendly (every property required, no others).
func ClaimsSchema(labels []string) json.RawMessage {
	enum, _ := json.Marshal(labels)
	return json.RawMessage(`{"type":"object","additionalProperties":false,"required":["claims"],"properties":{"claims":{"type":"array","items":` +
		`{"type":"object","additionalProperties":false,"required":["claim","verdict","passages","reason"],"properties":{` +
		`"claim":{"type":"string"},"verdict":{"type":"string","enum":` + string(enum) + `},` +
		`"passages":{"type":"array","items":{"type":"string"},"description":"ids of the passages that back or contradict the claim"},` +
		`"reason":{"type":"string"}}}}}}`)
}

// ReadClaims reads an answer {"claims": [...]} with sdk/verdict. Each verdict must be one
// of labels (compared without regard to case, spaces or hyphens, and given back as the
// label); a passage id the run does not have (ids) is dropped and listed in unknown. An
// answer without a "claims" array, an empty claim or another verdict is an error that
// quotes the answer.
func ReadClaims(content string, labels []string, ids map[string]bool) (claims []Claim, unknown []string, err error) {
	var ans struct {
		Claims *[]struct {
			Claim    string `json:"claim"`
			Verdict  any    `json:"verdict"`
			Passages any    `json:"passages"`
			Reason   string `json:"reason"`
		} `json:"claims"`
	}
	if err := verdict.Extract(content, &ans); err != nil {
		return nil, nil, err
	}
	if ans.Claims == nil {
		return nil, nil, fmt.Errorf(`the judge's answer has no "claims" array (judge output: %s)`, Clip(content, 500))
	}
	claims = make([]Claim, 0, len(*ans.Claims))
	for i, c := range *ans.Claims {
		text := strings.TrimSpace(c.Claim)
		if text == "" {
			return nil, nil, fmt.Errorf("claim %d of the judge's answer is empty (judge output: %s)", i+1, Clip(content, 500))
		}
		label, ok := Label(c.Verdict, labels)
		if !ok {
			return nil, nil, fmt.Errorf("claim %d (%q): verdict %s is not one of %s (judge output: %s)",
				i+1, Clip(text, 80), show(c.Verdict), strings.Join(labels, ", "), Clip(content, 500))
		}
		var kept []string
		for _, id := range passageIDs(c.Passages) {
			switch {
			case ids[id]:
				kept = append(kept, id)
			default:
				unknown = append(unknown, id)
			}
		}
		claims = append(claims, Claim{Claim: text, Verdict: label, Passages: kept, Reason: strings.TrimSpace(c.Reason)})
	}
	return claims, unknown, nil
}

// Label matches a judge's verdict to one of labels: exactly, else without regard to case,
// surrounding quotes and spaces, and with spaces and hyphens read as "_".
func Label(v any, labels []string) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	norm := strings.ToLower(strings.Trim(strings.TrimSpace(s), `"'.`))
	norm = strings.NewReplacer(" ", "_", "-", "_").Replace(norm)
	for _, l := range labels {
		if s == l || norm == l {
			return l, true
		}
	}
	return "", false
}

// passageIDs reads the ids a judge listed: strings or numbers, in a list or alone, written
// as "2", "[2]" or "passage 2".
func passageIDs(v any) []string {
	var items []any
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		items = x
	default:
		items = []any{x}
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		switch x := it.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			b, _ := json.Marshal(x)
			s = string(b)
		}
		s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "[]"))
		if low := strings.ToLower(s); strings.HasPrefix(low, "passage ") {
			s = strings.TrimSpace(s[len("passage "):])
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// IDs is the set of the passages' ids.
func IDs(ps []sdk.Passage) map[string]bool {
	out := make(map[string]bool, len(ps))
	for _, p := range ps {
		out[p.ID] = true
	}
	return out
}

// Count counts the claims by verdict.
func Count(claims []Claim) map[string]int {
	out := map[string]int{}
	for _, c := range claims {
		out[c.Verdict]++
	}
	return out
}

// Listed says which claims had a verdict, for a reason: `contradicted: "X" (passage 2),
// "Y" (passages 1, 3)`, at most three claims, each clipped; "" when none had it.
func Listed(claims []Claim, label string) string {
	var items []string
	n := 0
	for _, c := range claims {
		if c.Verdict != label {
			continue
		}
		n++
		if len(items) == 3 {
			continue
		}
		item := strconv.Quote(Clip(c.Claim, 120))
		switch len(c.Passages) {
		case 0:
		case 1:
			item += " (passage " + c.Passages[0] + ")"
		default:
			item += " (passages " + strings.Join(c.Passages, ", ") + ")"
		}
		items = append(items, item)
	}
	if n == 0 {
		return ""
	}
	if n > len(items) {
		items = append(items, fmt.Sprintf("and %d more", n-len(items)))
	}
	return strings.ReplaceAll(label, "_", " ") + ": " + strings.Join(items, ", ")
}

// ScoreStep is the "score" step: how the verdicts became the score.
func ScoreStep(output any) sdk.Step {
	b, _ := json.Marshal(output)
	return sdk.Step{Name: "score", Output: b}
}

// Clip shortens s to at most n bytes at a character boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil || v == nil {
		return "(none)"
	}
	return string(b)
}

// DecodeConfig decodes a scorer's config over its defaults, refusing unknown fields.
func DecodeConfig(scorer string, raw json.RawMessage, cfg any) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("%s: config: %w", scorer, err)
	}
	return nil
}

// OutputPrompt is the user message of a scorer that checks the output against the
// passages: the scorer's constant instructions first (so that an endpoint's prompt cache
// can reuse them), then the run ([RunSection]), then the answer format.
func OutputPrompt(instructions, format string, run *sdk.Run, ps []sdk.Passage) string {
	return instructions + "\n\nNow the run to check.\n\n" + RunSection(run, ps) + "\n\n" + format
}

// RunSection shows the judge the run: its input, the passages with their ids and its
// output, each in its tag.
func RunSection(run *sdk.Run, ps []sdk.Passage) string {
	var b strings.Builder
	b.WriteString("INPUT (what the agent was asked):\n<input>\n")
	b.WriteString(run.Input)
	b.WriteString("\n</input>\n\nPASSAGES (the evidence the agent retrieved, each with its id):\n")
	b.WriteString(PassagesText(ps))
	b.WriteString("\n\nOUTPUT (what the agent said):\n<output>\n")
	b.WriteString(run.Output)
	b.WriteString("\n</output>")
	return b.String()
}

// Sentences splits text into sentences: at line breaks, and after ".", "!" or "?" followed
// by a space and a capital letter, a digit or an opening quote. Empty pieces are dropped.
// It is the unit of DeepEval's contextual recall, which gives a verdict per sentence of
// the expected output.
func Sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		rs := []rune(line)
		start := 0
		for i := 0; i < len(rs); i++ {
			if rs[i] != '.' && rs[i] != '!' && rs[i] != '?' {
				continue
			}
			if i+2 < len(rs) && rs[i+1] == ' ' && startsSentence(rs[i+2]) {
				if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
					out = append(out, s)
				}
				start = i + 2
			}
		}
		if s := strings.TrimSpace(string(rs[start:])); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func startsSentence(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsDigit(r) || r == '"' || r == '\'' || r == '“' || r == '('
}
