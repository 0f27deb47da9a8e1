package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// OpenAIResponses converts OpenAI Responses API logs (the API the Vercel AI SDK, and so
// Mastra, calls by default): records {"request": {responses request}, "response":
// {response}} as a logging proxy writes them, with the optional fields OpenAIChat reads
// around them ("id", "agent", "metadata", "latency_ms", and "error" for a call that failed).
//
// The request's instructions are the system turn and its input (a string, or items:
// messages of input_text parts, function_call and function_call_output items) the
// conversation; the response's output items are the reply: message items' output_text
// and refusals, function_call items as tool calls (built-in tools such as web_search_call
// as calls of that tool), reasoning left out. Rounds are joined into turns by
// previous_response_id, or by the conversation they extend when the client sends it
// whole. An incomplete response's reason (max_output_tokens, content_filter) is the
// finish reason the pre-screen reads; a failed one's error goes to metadata.
func OpenAIResponses(r io.Reader, o Options, emit func(sdk.Run) error) error {
	return recordRounds[responsesRecord](r, o, emit, "a Responses API")
}

type responsesRecord struct {
	logFields
	Request *struct {
		Model              string          `json:"model"`
		Instructions       json.RawMessage `json:"instructions"`
		Input              json.RawMessage `json:"input"`
		PreviousResponseID string          `json:"previous_response_id"`
		User               string          `json:"user"`
	} `json:"request"`
	Response *struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		CreatedAt         float64         `json:"created_at"`
		Status            string          `json:"status"`
		Model             string          `json:"model"`
		Output            []responsesItem `json:"output"`
		Error             json.RawMessage `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *struct {
			InputTokens  float64 `json:"input_tokens"`
			OutputTokens float64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

// responsesItem is an input or output item; the fields used depend on its type.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Status    string          `json:"status"`
}

func (rec *responsesRecord) exchange(n int) (*exchange, error) {
	if err := rec.missing(rec.Request != nil, rec.Response != nil, `{"request": {responses request}, "response": {response}}`); err != nil {
		return nil, err
	}
	ex := rec.logFields.exchange(n)
	req := rec.Request
	ex.model, ex.previousID = req.Model, req.PreviousResponseID
	ex.facts = map[string]string{"user": req.User}
	if s := textOf(decodeAny(req.Instructions)); s != "" {
		ex.sent = append(ex.sent, sdk.Turn{Role: "system", Content: s})
	}
	items, err := inputItems(req.Input)
	if err != nil {
		return nil, err
	}
	ex.sent = append(ex.sent, responsesTurns(items, "user")...)
	resp := rec.Response
	if resp == nil {
		return ex, nil // a failed call: missing said it has an error
	}
	if resp.Object != "" && resp.Object != "response" {
		return nil, fmt.Errorf(`the response is a %q, not a Responses API "response" (for chat completions use --from openai-chat)`, resp.Object)
	}
	ex.responseID, ex.status = resp.ID, resp.Status
	ex.model = firstNonEmpty(resp.Model, ex.model)
	ex.errMsg = firstNonEmpty(errorText(resp.Error), ex.errMsg)
	if d := resp.IncompleteDetails; d != nil {
		ex.finish = d.Reason
	}
	if u := resp.Usage; u != nil {
		ex.inTokens, ex.outTokens, ex.hasUsage = u.InputTokens, u.OutputTokens, true
	}
	if resp.CreatedAt > 0 {
		t := time.Unix(int64(resp.CreatedAt), 0).UTC()
		ex.when = &t
	}
	if resp.Status != "failed" || len(resp.Output) > 0 {
		reply := sdk.Turn{Role: "assistant"}
		for _, t := range responsesTurns(resp.Output, "assistant") {
			if t.Role == "assistant" {
				reply.Content = joinText(reply.Content, t.Content)
				reply.ToolCalls = append(reply.ToolCalls, t.ToolCalls...)
			}
		}
		ex.reply = &reply
		ex.more = hasFunctionCall(resp.Output) && resp.Status != "incomplete"
	}
	ex.id = firstNonEmpty(ex.id, resp.ID, fmt.Sprintf("record-%d", n))
	return ex, nil
}

// inputItems reads a request's input: a string (one user message) or a list of items.
func inputItems(raw json.RawMessage) ([]responsesItem, error) {
	var s string
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if json.Unmarshal(raw, &s) == nil {
		return []responsesItem{{Type: "message", Role: "user", Content: mustJSON(s)}}, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("request.input: want a string or a list of items: %w", err)
	}
	return items, nil
}

// responsesTurns maps items to turns: messages by their role (role defaults to def),
// function calls to assistant turns with a call, function call outputs to tool turns,
// built-in tool calls to calls of that tool; reasoning and references are left out.
func responsesTurns(items []responsesItem, def string) []sdk.Turn {
	var out []sdk.Turn
	for _, it := range items {
		switch {
		case it.Type == "message" || it.Type == "" && it.Role != "":
			out = append(out, sdk.Turn{Role: firstNonEmpty(it.Role, def), Content: textOf(decodeAny(it.Content))})
		case it.Type == "function_call":
			out = append(out, sdk.Turn{Role: "assistant", ToolCalls: []sdk.ToolCall{{
				ID: firstNonEmpty(it.CallID, it.ID), Name: it.Name, Arguments: jsonText(it.Arguments)}}})
		case it.Type == "function_call_output":
			out = append(out, sdk.Turn{Role: "tool", ToolCallID: it.CallID, Content: jsonText(it.Output)})
		case strings.HasSuffix(it.Type, "_call") && it.Type != "function_call":
			call := sdk.ToolCall{ID: it.ID, Name: strings.TrimSuffix(it.Type, "_call"), Arguments: jsonText(it.Action)}
			if it.Status == "failed" {
				call.Result = `{"error":"the call failed"}`
			}
			out = append(out, sdk.Turn{Role: "assistant", ToolCalls: []sdk.ToolCall{call}})
		}
	}
	return mergeAssistant(out)
}

// mergeAssistant folds consecutive assistant turns into one, as one reply holds its text
// and its calls.
func mergeAssistant(ts []sdk.Turn) []sdk.Turn {
	var out []sdk.Turn
	for _, t := range ts {
		if n := len(out); n > 0 && t.Role == "assistant" && out[n-1].Role == "assistant" {
			out[n-1].Content = joinText(out[n-1].Content, t.Content)
			out[n-1].ToolCalls = append(out[n-1].ToolCalls, t.ToolCalls...)
			continue
		}
		out = append(out, t)
	}
	return out
}

func hasFunctionCall(items []responsesItem) bool {
	for _, it := range items {
		if it.Type == "function_call" {
			return true
		}
	}
	return false
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// decodeAny decodes a JSON value, or returns nil.
func decodeAny(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // strings and maps of them always encode
	return b
}
