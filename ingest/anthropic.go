package ingest

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/scorekit/scorekit/sdk"
)

// AnthropicMessages converts Anthropic Messages API logs: records {"request": {messages
// request}, "response": {message}} as a logging proxy writes them, with the optional
// fields OpenAIChat reads around them ("id", "agent", "metadata", "latency_ms", and
// "error" for a call that failed, such as an overloaded_error).
//
// The request's system prompt is the system turn. Content is a string or blocks: text
// blocks are the text, tool_use blocks the assistant's tool calls (input as arguments),
// tool_result blocks (which Anthropic sends in a user message) tool turns, so that the
// user's last real message stays the question; a tool_result with is_error true is kept
// as {"is_error": true, "content": ...}, which the scorers read as a failed call.
// Thinking, images and documents are left out. The rounds of one turn (a reply that stops
// for tool_use, then the request that sends the results) are joined into one run; the
// last round's stop_reason goes to metadata.stop_reason, which the pre-screen reads
// (max_tokens is a cut-off answer, refusal a refusal).
func AnthropicMessages(r io.Reader, o Options, emit func(sdk.Run) error) error {
	return recordRounds[anthropicRecord](r, o, emit, "an Anthropic Messages")
}

type anthropicRecord struct {
	logFields
	Request *struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Metadata *struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
	} `json:"request"`
	Response *struct {
		ID         string           `json:"id"`
		Type       string           `json:"type"`
		Model      string           `json:"model"`
		Content    []anthropicBlock `json:"content"`
		StopReason string           `json:"stop_reason"`
		Error      json.RawMessage  `json:"error"`
		Usage      *struct {
			InputTokens  float64 `json:"input_tokens"`
			OutputTokens float64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

// anthropicBlock is a content block; the fields used depend on its type.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (rec *anthropicRecord) exchange(n int) (*exchange, error) {
	if err := rec.missing(rec.Request != nil, rec.Response != nil, `{"request": {messages request}, "response": {message}}`); err != nil {
		return nil, err
	}
	ex := rec.logFields.exchange(n)
	req := rec.Request
	ex.model, ex.finishKey = req.Model, "stop_reason"
	ex.facts = map[string]string{}
	if req.Metadata != nil {
		ex.facts["user"] = req.Metadata.UserID
	}
	if s := textOf(decodeAny(req.System)); s != "" {
		ex.sent = append(ex.sent, sdk.Turn{Role: "system", Content: s})
	}
	for i, m := range req.Messages {
		blocks, err := anthropicContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("request.messages[%d].content: %w", i, err)
		}
		ex.sent = append(ex.sent, anthropicTurns(m.Role, blocks)...)
	}
	resp := rec.Response
	if resp == nil {
		return ex, nil // a failed call: missing said it has an error
	}
	if resp.Type == "error" { // an error body logged as the response
		ex.errMsg = firstNonEmpty(errorText(resp.Error), ex.errMsg, "the response is an error")
		return ex, nil
	}
	if resp.Type != "" && resp.Type != "message" {
		return nil, fmt.Errorf(`the response is a %q, not a Messages API "message"`, resp.Type)
	}
	turns := anthropicTurns("assistant", resp.Content)
	reply := sdk.Turn{Role: "assistant"}
	if len(turns) > 0 {
		reply = turns[0]
	}
	ex.reply = &reply
	ex.more = resp.StopReason == "tool_use" || resp.StopReason == "pause_turn"
	ex.model = firstNonEmpty(resp.Model, ex.model)
	ex.finish = resp.StopReason
	ex.facts["response_id"] = resp.ID
	if u := resp.Usage; u != nil {
		ex.inTokens, ex.outTokens, ex.hasUsage = u.InputTokens, u.OutputTokens, true
	}
	ex.id = firstNonEmpty(ex.id, resp.ID, fmt.Sprintf("record-%d", n))
	return ex, nil
}

// anthropicContent reads content: a string (one text block) or blocks.
func anthropicContent(raw json.RawMessage) ([]anthropicBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("want a string or content blocks: %w", err)
	}
	return blocks, nil
}

// anthropicTurns maps one message's blocks to turns: tool results first, as tool turns,
// then the message itself with its text and tool calls, unless it has neither.
func anthropicTurns(role string, blocks []anthropicBlock) []sdk.Turn {
	var out []sdk.Turn
	msg := sdk.Turn{Role: role}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			msg.Content = joinText(msg.Content, b.Text)
		case "tool_use", "server_tool_use":
			msg.ToolCalls = append(msg.ToolCalls, sdk.ToolCall{ID: b.ID, Name: b.Name, Arguments: jsonText(b.Input)})
		case "tool_result":
			result := textOf(decodeAny(b.Content))
			if result == "" {
				result = jsonText(b.Content)
			}
			if b.IsError {
				result = jsonText(map[string]any{"is_error": true, "content": result})
			}
			out = append(out, sdk.Turn{Role: "tool", ToolCallID: b.ToolUseID, Content: result})
		}
	}
	if msg.Content != "" || len(msg.ToolCalls) > 0 || len(out) == 0 {
		out = append(out, msg)
	}
	return out
}
