package sdk

import (
	"context"
	"encoding/json"
)

// Judge gives a scorer LLM access through the host's broker. Scorers never hold API keys
// or open sockets; the host owns the endpoint, budgets, retries and the cache.
//
// Requests come in batches because a WASM guest is single threaded: a scorer that needs
// one verdict per passage asks once and the host runs the batch concurrently.
type Judge interface {
	// Complete runs every request and returns one response per request, in order. A
	// request that failed has Response.Error set; the returned error is for failures of
	// the whole batch (budget exhausted, context done).
	Complete(ctx context.Context, reqs []CompletionRequest) ([]CompletionResponse, error)
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role" jsonschema:"enum=system,enum=user,enum=assistant"`
	Content string `json:"content"`
}

// CompletionRequest is one chat completion.
type CompletionRequest struct {
	Messages []Message `json:"messages"`
	// Temperature. Optional. Default is 0.
	Temperature float64 `json:"temperature,omitempty"`
	// MaxTokens caps the completion. Optional. Default is the broker's.
	MaxTokens int `json:"max_tokens,omitempty"`
	// JSON asks the endpoint for a JSON object (response_format json_object).
	JSON bool `json:"json,omitempty"`
	// Schema is the JSON Schema of the answer, an object. The broker asks the endpoint for
	// structured output (response_format json_schema, strict) where the endpoint offers
	// it, and for a JSON object where it does not; a scorer parses the answer either way
	// (sdk/verdict), since not every endpoint holds to a schema. Optional.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Model asks for a judge model other than the host's. The host sends the request only
	// when its operator allows that model, and fails it with invalid_config, naming the
	// models allowed, otherwise. Optional. Default is the host's model.
	Model string `json:"model,omitempty"`
}

// CompletionResponse is the answer to one CompletionRequest.
type CompletionResponse struct {
	Content string `json:"content"`
	// FinishReason is the endpoint's ("stop", "length" ...); "length" means truncated.
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage of this request (zero for a cache hit).
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// Cached is true when the broker answered from its cache.
	Cached bool `json:"cached,omitempty"`
	// Error is set when this request failed; Content is then empty.
	Error *Error `json:"error,omitempty"`
}

// Ask is a convenience for a single user prompt asking for JSON: it sends one request and
// returns its content, or an error for a failed request.
func Ask(ctx context.Context, j Judge, system, prompt string) (CompletionResponse, error) {
	msgs := make([]Message, 0, 2)
	if system != "" {
		msgs = append(msgs, Message{Role: "system", Content: system})
	}
	msgs = append(msgs, Message{Role: "user", Content: prompt})
	out, err := j.Complete(ctx, []CompletionRequest{{Messages: msgs, JSON: true}})
	if err != nil {
		return CompletionResponse{}, err
	}
	if len(out) != 1 {
		return CompletionResponse{}, &Error{Code: CodeJudgeError, Message: "judge returned no response"}
	}
	if out[0].Error != nil {
		return out[0], out[0].Error
	}
	return out[0], nil
}
