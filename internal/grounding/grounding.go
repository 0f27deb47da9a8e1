// Package grounding holds what the scorers that check text against a run's passages share
// (faithfulness, hallucination_free, context_recall, and noise_robustness's ragas method,
// in plugins/): where a run's passages come from, how they are shown to the judge, the
// skipped results of a run with nothing to check, the claim answer and its reading with
// sdk/verdict, and the flags and reason clauses the passages and the judge's answer call
// for. The judge call itself, the result's steps and telemetry are internal/judgekit's.
//
// Each claim scorer asks the judge once: the claims and their verdicts come back in one
// structured answer ([Claim]), and the reason a person reads is written from the verdicts,
// never asked for. Mastra's scorers make three calls for the same (extract, analyze,
// reason).
//
// The package depends on the standard library, the sdk, internal/judgekit and the
// pre-screen's checks only: it compiles into the WASM build of the built-ins.
package grounding

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/internal/textkit"
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

// ContextPathSchema is the JSON Schema of the config field context_path, the metadata path
// [Gather] reads the passages from, as a member of a config schema's "properties".
const ContextPathSchema = `"context_path": {"type": "string", "description": "Dotted path into run.metadata holding the passages. Default: run.context."}`

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
		if v, ok := Lookup(run.Metadata, contextPath); ok {
			ps, err := ToPassages(v)
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

// Lookup follows a dotted path through nested JSON objects (a run's metadata).
func Lookup(m map[string]any, path string) (any, bool) {
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

// ToPassages converts a decoded JSON array of strings or {id, text} objects, numbering
// those without an id by position.
func ToPassages(v any) ([]sdk.Passage, error) {
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

// Require gathers the passages a scorer checks text against ([Gather]). done is true when
// res is the result to give instead: failed (invalid_run) when the value at contextPath is
// not a list of passages, skipped ([NoPassages], what naming what the scorer checks) when
// the run has none.
func Require(run *sdk.Run, scorer, contextPath, what string) (ev Evidence, res sdk.Result, done bool) {
	ev, err := Gather(run, contextPath)
	if err != nil {
		return ev, sdk.Failed(sdk.CodeInvalidRun, scorer+": "+err.Error()), true
	}
	if len(ev.Passages) == 0 {
		return ev, NoPassages(what, ev), true
	}
	return ev, sdk.Result{}, false
}

// Ready is [Require] for a scorer about to ask the judge: done is also true, res being
// no_judge, when the call has no judge.
func Ready(call *sdk.Call, scorer, contextPath, what string) (ev Evidence, res sdk.Result, done bool) {
	if ev, res, done = Require(&call.Run, scorer, contextPath, what); done {
		return ev, res, true
	}
	if call.Judge == nil {
		return ev, sdk.NoJudge(scorer), true
	}
	return ev, sdk.Result{}, false
}

// ReadyOutput is [Ready] for a scorer that checks the output's claims: an output with no
// claim to check is skipped first ([CheckOutput]).
func ReadyOutput(call *sdk.Call, scorer, contextPath, what string) (Evidence, sdk.Result, bool) {
	if res, ok := CheckOutput(&call.Run, scorer); ok {
		return Evidence{}, res, true
	}
	return Ready(call, scorer, contextPath, what)
}

// Flags are the flags the evidence and the passage ids the judge named that the run does
// not have (unknown, dropped) call for: context_from_tools, unknown_passage.
func (ev Evidence) Flags(unknown []string) []string {
	var flags []string
	if ev.FromTools {
		flags = append(flags, FlagContextFromTools)
	}
	if len(unknown) > 0 {
		flags = append(flags, FlagUnknownPassage)
	}
	return flags
}

// Notes are the clauses of a reason that say the same as [Evidence.Flags].
func (ev Evidence) Notes(unknown []string) []string {
	var notes []string
	if ev.FromTools {
		notes = append(notes, "the run has no context passages, so its tool results were the evidence")
	}
	if len(unknown) > 0 {
		notes = append(notes, "the judge cited passages the run does not have ("+strings.Join(unknown, ", ")+"), dropped")
	}
	return notes
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

// AskClaims makes a claim scorer's one judge call ([judgekit.Ask]) and reads its answer
// ([ReadClaims]) against the passages ps: the claims, the ids the judge named that ps does
// not have, and the exchange, whose parsed output is the claims.
func AskClaims(ctx context.Context, j sdk.Judge, system, user string, schema json.RawMessage, labels []string, ps []sdk.Passage) (
	ex *judgekit.Exchange, claims []Claim, unknown []string, err error) {
	ex, content, err := judgekit.Ask(ctx, j, system, user, schema)
	if err != nil {
		return ex, nil, nil, err
	}
	if claims, unknown, err = ReadClaims(content, labels, IDs(ps)); err != nil {
		return ex, nil, nil, err
	}
	ex.Parsed = map[string]any{"claims": claims}
	return ex, claims, unknown, nil
}

// NoClaims is the skipped result of an output the judge found no claim in (flag no_claims
// added to flags); nothing says what there is then not to score ("there is nothing to
// ground").
func NoClaims(ex *judgekit.Exchange, scorer, nothing string, flags []string) sdk.Result {
	return ex.Skipped(scorer+": the judge found no claim in the output to check against the passages "+
		"(a question back, a greeting, an offer of help); "+nothing, append(flags, FlagNoClaims))
}

// Share is the share of verdicts that good accepts, and false when there are none.
func Share(verdicts []string, good func(verdict string) bool) (float64, bool) {
	if len(verdicts) == 0 {
		return 0, false
	}
	n := 0
	for _, v := range verdicts {
		if good(v) {
			n++
		}
	}
	return float64(n) / float64(len(verdicts)), true
}

// Verdicts are the claims' verdicts, in order.
func Verdicts(claims []Claim) []string {
	out := make([]string, len(claims))
	for i, c := range claims {
		out[i] = c.Verdict
	}
	return out
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
		return nil, nil, fmt.Errorf(`the judge's answer has no "claims" array (judge output: %s)`, textkit.Clip(content, 500))
	}
	claims = make([]Claim, 0, len(*ans.Claims))
	for i, c := range *ans.Claims {
		text := strings.TrimSpace(c.Claim)
		if text == "" {
			return nil, nil, fmt.Errorf("claim %d of the judge's answer is empty (judge output: %s)", i+1, textkit.Clip(content, 500))
		}
		label, ok := Label(c.Verdict, labels)
		if !ok {
			return nil, nil, fmt.Errorf("claim %d (%q): verdict %s is not one of %s (judge output: %s)",
				i+1, textkit.Clip(text, 80), show(c.Verdict), strings.Join(labels, ", "), textkit.Clip(content, 500))
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
		item := strconv.Quote(textkit.Clip(c.Claim, 120))
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

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil || v == nil {
		return "(none)"
	}
	return string(b)
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
