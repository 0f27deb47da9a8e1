package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/sdk"
)

// OpenAIChat converts OpenAI chat completion logs. Each record is one exchange, in one of
// the shapes such logs take:
//
//   - {"request": {chat completion request}, "response": {chat completion}}: what a
//     logging proxy or gateway records. The request's messages are the input, the first
//     choice's message the output;
//   - {"messages": [...]}: a whole conversation (OpenAI's fine-tuning format, most chat
//     exports); the assistant and tool turns after the last user turn are the output.
//
// Either may carry "id" (else the response's id), "agent" and "metadata" fields, which
// are kept. The run records the model, the finish reason (which the pre-screen reads:
// "length" is a cut-off answer, "content_filter" a refusal), token usage and the response
// time. Records are JSON Lines, concatenated JSON, or one JSON array.
func OpenAIChat(r io.Reader, o Options, emit func(sdk.Run) error) error {
	return records(r, func(n int, raw json.RawMessage) error {
		run, err := openAIRun(raw)
		if err != nil {
			return o.report(n, err)
		}
		if run.Agent == "" {
			run.Agent = o.Agent
		}
		if run.ID == "" {
			run.ID = fmt.Sprintf("record-%d", n)
		}
		return emit(run)
	})
}

// openAIRecord is one log record; every field is optional.
type openAIRecord struct {
	ID       json.RawMessage                `json:"id"`
	Agent    string                         `json:"agent"`
	Metadata map[string]any                 `json:"metadata"`
	Messages []openai.ChatCompletionMessage `json:"messages"`
	Request  *struct {
		Model    string                         `json:"model"`
		Messages []openai.ChatCompletionMessage `json:"messages"`
		User     string                         `json:"user"`
	} `json:"request"`
	Response *struct {
		ID      string                        `json:"id"`
		Model   string                        `json:"model"`
		Created int64                         `json:"created"`
		Choices []openai.ChatCompletionChoice `json:"choices"`
		Usage   *openai.Usage                 `json:"usage"`
	} `json:"response"`
}

func openAIRun(raw json.RawMessage) (sdk.Run, error) {
	var rec openAIRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return sdk.Run{}, fmt.Errorf("not an OpenAI chat record: %w", err)
	}
	meta := map[string]any{}
	for k, v := range rec.Metadata {
		meta[k] = v
	}
	var input, output []sdk.Turn
	var when *time.Time
	switch {
	case rec.Request != nil && rec.Response != nil:
		input = turnsOf(rec.Request.Messages)
		if len(rec.Response.Choices) == 0 {
			return sdk.Run{}, errors.New("the response has no choices, so no output to score")
		}
		c := rec.Response.Choices[0]
		output = turnsOf([]openai.ChatCompletionMessage{c.Message})
		setIf(meta, "model", firstNonEmpty(rec.Response.Model, rec.Request.Model))
		setIf(meta, "finish_reason", string(c.FinishReason))
		setIf(meta, "response_id", rec.Response.ID)
		setIf(meta, "user", rec.Request.User)
		if u := rec.Response.Usage; u != nil {
			meta["prompt_tokens"], meta["completion_tokens"] = float64(u.PromptTokens), float64(u.CompletionTokens)
		}
		if rec.Response.Created > 0 {
			t := time.Unix(rec.Response.Created, 0).UTC()
			when = &t
		}
		if len(rec.ID) == 0 && rec.Response.ID != "" {
			rec.ID, _ = json.Marshal(rec.Response.ID)
		}
	case len(rec.Messages) > 0:
		input, output = splitOutput(turnsOf(rec.Messages))
		if len(output) == 0 {
			return sdk.Run{}, errors.New("no assistant turn after the last user turn, so no output to score")
		}
	case rec.Request != nil:
		return sdk.Run{}, errors.New(`a "request" without its "response": the output to score is missing`)
	case rec.Response != nil:
		return sdk.Run{}, errors.New(`a "response" without its "request": the input it answered is missing`)
	default:
		return sdk.Run{}, errors.New(`want {"request": ..., "response": ...} or {"messages": [...]}`)
	}
	run, err := runFromTurns(input, output)
	if err != nil {
		return sdk.Run{}, err
	}
	if len(rec.ID) > 0 {
		var id any
		if err := json.Unmarshal(rec.ID, &id); err == nil {
			switch v := id.(type) {
			case string:
				run.ID = v
			case float64:
				run.ID = strings.TrimSpace(string(rec.ID))
			}
		}
	}
	run.Agent, run.Time = rec.Agent, when
	if len(meta) > 0 {
		run.Metadata = meta
	}
	return run, nil
}

// turnsOf maps go-openai's messages (which read content as a string or parts) to turns.
func turnsOf(msgs []openai.ChatCompletionMessage) []sdk.Turn {
	out := make([]sdk.Turn, 0, len(msgs))
	for _, m := range msgs {
		t := sdk.Turn{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		if t.Content == "" {
			var parts []string
			for _, p := range m.MultiContent {
				if p.Type == openai.ChatMessagePartTypeText && p.Text != "" {
					parts = append(parts, p.Text)
				}
			}
			t.Content = strings.Join(parts, "\n")
		}
		if t.Content == "" {
			t.Content = m.Refusal
		}
		for _, c := range m.ToolCalls {
			t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		if f := m.FunctionCall; f != nil { // the legacy single function call
			t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{Name: f.Name, Arguments: f.Arguments})
		}
		out = append(out, t)
	}
	return out
}

func setIf(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
