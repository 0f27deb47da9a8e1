package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Run is one thing an agent did: the unit a scorer grades.
//
// Unknown fields in a dataset line are tolerated and dropped, so a log export with extra
// columns scores as it is. Runs come in the shapes agents produce them (see
// [Run.UnmarshalJSON]); a scorer always sees the normalized view: Input is the question
// (for a conversation, its last user turn), Conversation holds every turn the agent was
// given, Output is what the agent said and ToolCalls what it did.
type Run struct {
	// ID identifies the run in results. Optional; the CLI uses the line number when empty.
	// In JSON a string or a number (kept as written: 42 is "42").
	ID string `json:"id,omitempty"`
	// Agent names the agent that produced the run. Optional.
	Agent string `json:"agent,omitempty"`
	// Input is what the agent was asked or given (a question, an email, a task). In JSON a
	// string, or a conversation: an array of chat messages in OpenAI's shape, of which
	// Input is the text of the last user turn and Conversation keeps every turn.
	Input string `json:"input"`
	// Conversation is every turn the agent was given, in order, when the input was a
	// conversation: system instructions, earlier user and assistant turns, tool results.
	// Optional.
	Conversation []Turn `json:"conversation,omitempty"`
	// Output is what the agent answered. Required in datasets; it may be empty, which the
	// pre-screen flags. In JSON a string, or the agent's turns: one assistant message or an
	// array of assistant and tool messages, of which Output is the assistant's text (turns
	// joined by a blank line) and ToolCalls the calls it made.
	Output string `json:"output" jsonschema:"required"`
	// ToolCalls are the tools the agent called while producing the output, in order, with
	// their results where the run records them. Optional.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Context is the evidence the agent retrieved, in retrieval order.
	Context []Passage `json:"context,omitempty"`
	// Expected is a reference answer. Optional.
	Expected string `json:"expected,omitempty"`
	// ExpectedToolCalls are the tool calls the agent should make for this input, in the
	// order it should make them, for scorers that grade tool use (tool_calls): each names
	// a tool and may say what its arguments must be. Optional.
	ExpectedToolCalls []ExpectedToolCall `json:"expected_tool_calls,omitempty"`
	// CitationAudit is a citation audit computed upstream. Optional; when absent the host
	// computes one for scorers with a grounding dimension (faithfulness,
	// hallucination_free).
	CitationAudit *CitationAudit `json:"citation_audit,omitempty"`
	// Time is when the agent produced the run, in RFC 3339. Optional. The service orders an
	// agent's runs by it ("the last 10 runs") and uses the time it received the run when
	// it is absent; scorers need not read it.
	Time *time.Time `json:"time,omitempty"`
	// Metadata is free-form. A judge reads metadata.purpose or metadata.instructions to learn
	// what the agent is for (a Slack triage is the right answer to a raw email).
	//
	// How the run ended, when the caller recorded it, is definitive for the pre-screen
	// (absent keys and unknown values change nothing; values are read case-insensitively,
	// "-" as "_"):
	//   - the model's stop reason, under finish_reason (OpenAI and compatible servers),
	//     stop_reason (Anthropic), finishReason (Gemini, Vercel AI SDK) or stopReason
	//     (Bedrock): length, max_tokens, max_output_tokens mean the output was cut off at
	//     the token limit; content_filter, refusal, safety, prohibited_content, blocklist,
	//     spii, guardrail_intervened mean the provider refused or filtered the answer; error
	//     means the call failed;
	//   - error: any non-empty value (a message, an error object) means the framework
	//     recorded a failure;
	//   - status: error, failed, failure, timeout, timed_out, crashed mean the same.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Turn is one message of a conversation, in the shape of OpenAI's chat messages.
type Turn struct {
	// Role is who speaks: system, developer, user, assistant or tool.
	Role string `json:"role"`
	// Content is the message's text. In JSON a string, null, or an array of content parts
	// of which the text parts ({"type": "text", "text": ...}, and refusals) are kept, joined
	// by a newline; images, audio and files are not carried.
	Content string `json:"content,omitempty"`
	// Name of the participant or tool. Optional.
	Name string `json:"name,omitempty"`
	// ToolCalls an assistant turn made. Optional.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool turn answers. Optional.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one call of a tool (a function) by the agent.
type ToolCall struct {
	// ID pairs the call with its result. Optional.
	ID string `json:"id,omitempty"`
	// Name of the tool.
	Name string `json:"name"`
	// Arguments as the model wrote them, usually a JSON object as text. In JSON a string or
	// any value (kept as its JSON text).
	Arguments string `json:"arguments,omitempty"`
	// Result is what the tool returned, when the run records it. In JSON a string or any
	// value (kept as its JSON text).
	Result string `json:"result,omitempty"`
}

// ExpectedToolCall is a tool call a run should contain.
type ExpectedToolCall struct {
	// Name of the tool.
	Name string `json:"name" jsonschema:"required,minLength=1"`
	// Arguments the call must have: a JSON object each of whose fields the call's
	// arguments must hold with an equal value (fields it does not name may hold anything).
	// Optional. In JSON an object, or a string holding one (kept as its JSON text).
	Arguments string `json:"arguments,omitempty"`
	// ArgumentsSchema is a JSON Schema the call's arguments must satisfy. Optional. In
	// JSON an object, or a string holding one (kept as its JSON text).
	ArgumentsSchema string `json:"arguments_schema,omitempty"`
}

// UnmarshalJSON accepts arguments and arguments_schema as any JSON value, kept as its
// compact text when it is not a string.
func (c *ExpectedToolCall) UnmarshalJSON(b []byte) error {
	var q struct {
		Name            string          `json:"name"`
		Arguments       json.RawMessage `json:"arguments"`
		ArgumentsSchema json.RawMessage `json:"arguments_schema"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	out := ExpectedToolCall{Name: q.Name}
	var err error
	if out.Arguments, err = valueText(q.Arguments); err != nil {
		return fmt.Errorf("expected tool call %s: arguments: %w", out.Name, err)
	}
	if out.ArgumentsSchema, err = valueText(q.ArgumentsSchema); err != nil {
		return fmt.Errorf("expected tool call %s: arguments_schema: %w", out.Name, err)
	}
	*c = out
	return nil
}

// Purpose returns what the agent is for, from metadata "purpose", "instructions" or
// "system_prompt" (the first that is a non-empty string), else from the conversation's
// first system or developer turn, or "".
func (r *Run) Purpose() string {
	for _, k := range []string{"purpose", "instructions", "system_prompt"} {
		if s, ok := r.Metadata[k].(string); ok && s != "" {
			return s
		}
	}
	for _, t := range r.Conversation {
		if (t.Role == "system" || t.Role == "developer") && t.Content != "" {
			return t.Content
		}
	}
	return ""
}

// Passage is one piece of retrieved evidence. In JSON it is either a plain string or an
// object {"id": "...", "text": "..."}; a plain string gets the ID of its 1-based position,
// and a numeric id is kept as written (3 is "3").
type Passage struct {
	// ID is what citations in the output refer to ("1", "doc-3"). Optional in JSON.
	ID string `json:"id,omitempty"`
	// Text is the passage itself.
	Text string `json:"text"`
}

// UnmarshalJSON accepts a string or an {id, text} object.
func (p *Passage) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		p.ID = ""
		return json.Unmarshal(b, &p.Text)
	}
	var q struct {
		ID   json.RawMessage `json:"id"`
		Text string          `json:"text"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("context passage: want a string or {\"id\", \"text\"}: %w", err)
	}
	id, err := idText(q.ID)
	if err != nil {
		return fmt.Errorf("context passage: id: %w", err)
	}
	*p = Passage{ID: id, Text: q.Text}
	return nil
}

// UnmarshalJSON decodes a Run in the shapes agents produce it and normalizes it:
//
//   - "id" is a string or a number (kept as written);
//   - "input" is a string, or a conversation (an array of chat messages): Input becomes
//     the text of its last user turn and Conversation every turn;
//   - "output" is a string, one assistant message, or an array of assistant and tool
//     messages: Output becomes the assistant's text (turns joined by a blank line) and
//     ToolCalls its calls, each with the result of the tool turn that answers it;
//   - "tool_calls" and "conversation" may also be given as fields of their own, but not
//     together with an "output" or "input" that already carries them.
//
// Context passages that came without an ID are numbered by their 1-based position, so
// "[1]" in an output refers to the first passage.
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run
	var q struct {
		plain
		ID     json.RawMessage `json:"id"`
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*r = Run(q.plain)
	var err error
	if r.ID, err = idText(q.ID); err != nil {
		return fmt.Errorf("id: %w", err)
	}
	if err := r.setInput(q.Input); err != nil {
		return err
	}
	if err := r.setOutput(q.Output); err != nil {
		return err
	}
	r.NumberContext()
	return nil
}

// idText reads an id that is a string or a number; absent is "".
func idText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", nil
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", err
		}
		return n.String(), nil
	}
	return "", fmt.Errorf("want a string or a number, got %s", raw)
}

func (r *Run) setInput(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '[' {
		if err := json.Unmarshal(raw, &r.Input); err != nil {
			return fmt.Errorf("input: want a string or an array of chat messages: %w", err)
		}
		return nil
	}
	if r.Conversation != nil {
		return errors.New(`input: a conversation is given both as "input" and as "conversation"; keep one`)
	}
	var turns []Turn
	if err := json.Unmarshal(raw, &turns); err != nil {
		return fmt.Errorf("input: want a string or an array of chat messages: %w", err)
	}
	r.setConversation(turns)
	return nil
}

// setConversation makes turns the run's conversation, and the text of its last user turn
// its input.
func (r *Run) setConversation(turns []Turn) {
	r.Conversation = turns
	r.Input = ""
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == "user" {
			r.Input = turns[i].Content
			break
		}
	}
}

// SetTurns sets the run's input and output from chat turns, as [Run.UnmarshalJSON] reads
// an "input" and an "output" given as arrays of messages, without the JSON: Conversation
// is input and Input the text of its last user turn; Output is the text of output's
// assistant turns (joined by a blank line) and ToolCalls their calls, each with the
// content of the tool turn that answers it. The conversation and tool calls the run held
// are replaced. An output turn of another role than assistant or tool is an error.
func (r *Run) SetTurns(input, output []Turn) error {
	text, calls, err := flattenOutput(output)
	if err != nil {
		return err
	}
	r.setConversation(input)
	r.Output, r.ToolCalls = text, calls
	return nil
}

func (r *Run) setOutput(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var turns []Turn
	switch raw[0] {
	case '[':
		if err := json.Unmarshal(raw, &turns); err != nil {
			return fmt.Errorf("output: want a string, an assistant message or an array of messages: %w", err)
		}
	case '{':
		var t Turn
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("output: want a string, an assistant message or an array of messages: %w", err)
		}
		turns = []Turn{t}
	default:
		if err := json.Unmarshal(raw, &r.Output); err != nil {
			return fmt.Errorf("output: want a string, an assistant message or an array of messages: %w", err)
		}
		return nil
	}
	if r.ToolCalls != nil {
		return errors.New(`output: tool calls are given both in the output's messages and as "tool_calls"; keep one`)
	}
	var err error
	r.Output, r.ToolCalls, err = flattenOutput(turns)
	return err
}

// flattenOutput joins the assistant turns' text and gathers their tool calls, giving each
// call the content of the tool turn that answers it (by tool_call_id, else in order). A
// turn of another role does not belong in an output.
func flattenOutput(turns []Turn) (string, []ToolCall, error) {
	var (
		text  []string
		calls []ToolCall
		next  int // the first call without a result, for tool turns without an id
	)
	for k, t := range turns {
		switch t.Role {
		case "assistant", "":
			if t.Content != "" {
				text = append(text, t.Content)
			}
			calls = append(calls, t.ToolCalls...)
		case "tool", "function":
			i := -1
			for j := range calls {
				if t.ToolCallID != "" && calls[j].ID == t.ToolCallID {
					i = j
					break
				}
			}
			if i < 0 && t.ToolCallID == "" {
				for next < len(calls) && calls[next].Result != "" {
					next++
				}
				if next < len(calls) {
					i = next
				}
			}
			if i >= 0 {
				calls[i].Result = t.Content
			} else {
				calls = append(calls, ToolCall{ID: t.ToolCallID, Name: t.Name, Result: t.Content})
			}
		default:
			return "", nil, fmt.Errorf("output[%d]: role %q: the output holds the agent's own turns (assistant and tool messages); put earlier turns in the input", k, t.Role)
		}
	}
	return strings.Join(text, "\n\n"), calls, nil
}

// UnmarshalJSON accepts OpenAI's chat message: content as a string, null or an array of
// content parts; tool calls in OpenAI's shape or flat.
func (t *Turn) UnmarshalJSON(b []byte) error {
	var q struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID json.RawMessage `json:"tool_call_id"`
		// Refusal is the text of an assistant's refusal in OpenAI's responses.
		Refusal string `json:"refusal"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	content, err := contentText(q.Content)
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	if content == "" {
		content = q.Refusal
	}
	id, err := idText(q.ToolCallID)
	if err != nil {
		return fmt.Errorf("tool_call_id: %w", err)
	}
	*t = Turn{Role: q.Role, Content: content, Name: q.Name, ToolCalls: q.ToolCalls, ToolCallID: id}
	return nil
}

// contentText reads a message's content: a string, null, or content parts whose text
// (and refusal) parts are joined by a newline.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '[' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("want a string, null or an array of content parts: %w", err)
		}
		return s, nil
	}
	var parts []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string, null or an array of content parts: %w", err)
	}
	var text []string
	for _, p := range parts {
		switch {
		case p.Text != "":
			text = append(text, p.Text)
		case p.Refusal != "":
			text = append(text, p.Refusal)
		}
	}
	return strings.Join(text, "\n"), nil
}

// UnmarshalJSON accepts a flat call {id, name, arguments, result} or OpenAI's
// {id, type: "function", function: {name, arguments}}; arguments and result may be any
// JSON value, kept as its text when it is not a string.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var q struct {
		ID        json.RawMessage `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Result    json.RawMessage `json:"result"`
		Function  *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	id, err := idText(q.ID)
	if err != nil {
		return fmt.Errorf("tool call id: %w", err)
	}
	out := ToolCall{ID: id, Name: q.Name}
	args := q.Arguments
	if q.Function != nil {
		if out.Name == "" {
			out.Name = q.Function.Name
		}
		if len(args) == 0 {
			args = q.Function.Arguments
		}
	}
	if out.Arguments, err = valueText(args); err != nil {
		return fmt.Errorf("tool call %s: arguments: %w", out.Name, err)
	}
	if out.Result, err = valueText(q.Result); err != nil {
		return fmt.Errorf("tool call %s: result: %w", out.Name, err)
	}
	*c = out
	return nil
}

// valueText reads a string, or keeps any other JSON value as its compact text; null and
// absent are "".
func valueText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// NumberContext gives every passage without an ID the ID of its 1-based position.
func (r *Run) NumberContext() {
	for i := range r.Context {
		if r.Context[i].ID == "" {
			r.Context[i].ID = fmt.Sprint(i + 1)
		}
	}
}

// CitationAudit records what a deterministic check of the output's citations found.
type CitationAudit struct {
	// Citations counts citation markers found in the output.
	Citations int `json:"citations"`
	// Sentences counts the output's sentences that state something (claims).
	Sentences int `json:"sentences"`
	// UncitedSentences counts claims with no citation.
	UncitedSentences int `json:"uncited_sentences"`
	// InvalidCitations lists cited ids that match no context passage.
	InvalidCitations []string `json:"invalid_citations,omitempty"`
	// UnsupportedCitations lists citations whose passage cannot support the sentence that
	// cites it, as "id: reason".
	UnsupportedCitations []string `json:"unsupported_citations,omitempty"`
	// HallucinationDetected is true when a citation is invalid or provably unsupported.
	HallucinationDetected bool `json:"hallucination_detected"`
}

// ErrInvalidRun is wrapped by every error [Run.Validate] returns.
var ErrInvalidRun = errors.New("invalid run")

// Validate checks what the JSON schema cannot express for typed runs. Errors name the
// field and wrap [ErrInvalidRun].
func (r *Run) Validate() error {
	for i, p := range r.Context {
		if p.Text == "" {
			return fmt.Errorf("%w: context[%d] (id %q) has empty text; drop the passage or fill it", ErrInvalidRun, i, p.ID)
		}
	}
	for i, c := range r.ExpectedToolCalls {
		if c.Name == "" {
			return fmt.Errorf("%w: expected_tool_calls[%d] has no name; name the tool the agent should call", ErrInvalidRun, i)
		}
	}
	if a := r.CitationAudit; a != nil {
		if a.Citations < 0 || a.Sentences < 0 || a.UncitedSentences < 0 {
			return fmt.Errorf("%w: citation_audit counts must be >= 0", ErrInvalidRun)
		}
	}
	return nil
}
