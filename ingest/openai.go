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
//     logging proxy or gateway records, one model call per record. The rounds of one
//     agent turn (a reply with tool calls, then the request that sends their results
//     back) are joined into one run (see the package documentation); the first choice
//     is the reply. A record with "error" in place of "response" is a call that failed:
//     its run has no output and the error in metadata;
//   - {"messages": [...]}: a whole conversation (OpenAI's fine-tuning format, most chat
//     exports); the assistant and tool turns after the last user turn are the output.
//
// Either may carry "id" (else the response's id), "agent", "metadata" (kept),
// "latency_ms" or "duration_ms", and "timestamp" (RFC 3339, when the response has no time). The run records the model, the finish reason
// (which the pre-screen reads: "length" is a cut-off answer, "content_filter" a refusal),
// token usage (input_tokens, output_tokens), latency (latency_ms) and the response time,
// summed or taken from the last round for a joined turn.
func OpenAIChat(r io.Reader, o Options, emit func(sdk.Run) error) error {
	return rounds(r, o, emit, func(n int, raw []byte) (*exchange, error) {
		var rec openAIRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("not an OpenAI chat record: %w", err)
		}
		if rec.Request == nil && len(rec.Messages) > 0 {
			run, err := rec.conversationRun(n)
			if err != nil {
				return nil, err
			}
			run.Agent = firstNonEmpty(run.Agent, o.Agent)
			return nil, emit(run)
		}
		return rec.exchange(n)
	})
}

// rounds converts records that are one model call each: decode reads a record as a round
// (or emits a run itself and returns nil), and the rounds are joined into turns.
func rounds(r io.Reader, o Options, emit func(sdk.Run) error, decode func(n int, raw []byte) (*exchange, error)) error {
	j := newJoiner(&o, emit)
	err := records(r, &o, func(n int, raw []byte) error {
		ex, err := decode(n, raw)
		switch {
		case err != nil:
			return o.report(n, err)
		case ex == nil:
			return nil
		}
		return j.add(ex)
	})
	if err != nil {
		return err
	}
	return j.finish()
}

// recordRounds is rounds for records that are one model call each, decoded whole into an
// R whose exchange method makes the round; what names the format in the error of a line
// that is not such a record.
func recordRounds[R any, P interface {
	*R
	exchange(n int) (*exchange, error)
}](r io.Reader, o Options, emit func(sdk.Run) error, what string) error {
	return rounds(r, o, emit, func(n int, raw []byte) (*exchange, error) {
		var rec R
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("not %s record: %w", what, err)
		}
		return P(&rec).exchange(n)
	})
}

// openAIRecord is one log record; every field is optional.
type openAIRecord struct {
	logFields
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

// logFields are what a logging proxy adds around a call, in every format.
type logFields struct {
	ID         json.RawMessage `json:"id"`
	Agent      string          `json:"agent"`
	Metadata   map[string]any  `json:"metadata"`
	LatencyMS  *float64        `json:"latency_ms"`
	DurationMS *float64        `json:"duration_ms"`
	Error      json.RawMessage `json:"error"`
	Timestamp  *time.Time      `json:"timestamp"`
}

// missing says what a record lacks: its request, or both its response and an error.
func (f *logFields) missing(request, response bool, want string) error {
	switch {
	case !request && response:
		return errors.New(`a "response" without its "request": the input it answered is missing`)
	case !request:
		return errors.New("want " + want)
	case !response && errorText(f.Error) == "":
		return errors.New(`a "request" without its "response" or an "error": the output to score is missing`)
	}
	return nil
}

// exchange fills what every format shares: id, agent, metadata, latency, the error.
func (f *logFields) exchange(n int) *exchange {
	ex := &exchange{record: n, agent: f.Agent, meta: f.Metadata, id: idOf(f.ID)}
	if f.LatencyMS != nil {
		ex.latencyMS, ex.hasLatency = *f.LatencyMS, true
	} else if f.DurationMS != nil {
		ex.latencyMS, ex.hasLatency = *f.DurationMS, true
	}
	ex.errMsg = errorText(f.Error)
	if f.Timestamp != nil {
		t := f.Timestamp.UTC()
		ex.when = &t
	}
	return ex
}

func (rec *openAIRecord) exchange(n int) (*exchange, error) {
	if err := rec.missing(rec.Request != nil, rec.Response != nil, `{"request": ..., "response": ...} or {"messages": [...]}`); err != nil {
		return nil, err
	}
	ex := rec.logFields.exchange(n)
	ex.sent = turnsOf(rec.Request.Messages)
	ex.model = rec.Request.Model
	ex.facts = map[string]string{"user": rec.Request.User}
	resp := rec.Response
	if resp == nil {
		return ex, nil // a failed call: missing said it has an error
	}
	if len(resp.Choices) == 0 {
		if ex.errMsg != "" {
			return ex, nil
		}
		return nil, errors.New("the response has no choices, so no output to score")
	}
	c := resp.Choices[0]
	reply := turnsOf([]openai.ChatCompletionMessage{c.Message})[0]
	reply.Role = "assistant"
	ex.reply = &reply
	ex.more = len(reply.ToolCalls) > 0 && c.FinishReason != openai.FinishReasonLength
	ex.model = firstNonEmpty(resp.Model, ex.model)
	ex.finish = string(c.FinishReason)
	ex.facts["response_id"] = resp.ID
	if u := resp.Usage; u != nil {
		ex.inTokens, ex.outTokens, ex.hasUsage = float64(u.PromptTokens), float64(u.CompletionTokens), true
	}
	if resp.Created > 0 {
		t := time.Unix(resp.Created, 0).UTC()
		ex.when = &t
	}
	if ex.id == "" {
		ex.id = resp.ID
	}
	if ex.id == "" {
		ex.id = fmt.Sprintf("record-%d", n)
	}
	return ex, nil
}

// conversationRun converts a {"messages": [...]} record.
func (rec *openAIRecord) conversationRun(n int) (sdk.Run, error) {
	input, output := splitOutput(turnsOf(rec.Messages))
	if len(output) == 0 {
		return sdk.Run{}, errors.New("no assistant turn after the last user turn, so no output to score")
	}
	run, err := runFromTurns(input, output)
	if err != nil {
		return sdk.Run{}, err
	}
	run.ID = firstNonEmpty(idOf(rec.ID), fmt.Sprintf("record-%d", n))
	run.Agent = rec.Agent
	if len(rec.Metadata) > 0 {
		run.Metadata = rec.Metadata
	}
	return run, nil
}

// idOf reads a record's id, a string or a number (kept as written).
func idOf(raw json.RawMessage) string {
	var id any
	if len(raw) == 0 || json.Unmarshal(raw, &id) != nil {
		return ""
	}
	switch v := id.(type) {
	case string:
		return v
	case float64:
		return strings.TrimSpace(string(raw))
	}
	return ""
}

// errorText reads an error as logs record it: a string, or an object with a message
// (OpenAI's and Anthropic's {"error": {"message": ...}} included).
func errorText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	for {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		if msg, ok := m["message"].(string); ok && msg != "" {
			return msg
		}
		if inner, ok := m["error"]; ok {
			v = inner
			continue
		}
		return jsonText(m)
	}
	if s, ok := v.(string); ok {
		return s
	}
	return jsonText(v)
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
