package ingest

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/scorekit/scorekit/sdk"
)

func attrMap(kv map[string]string) pcommon.Map {
	m := pcommon.NewMap()
	for k, v := range kv {
		m.PutStr(k, v)
	}
	return m
}

// TestIndexedMessages holds OpenInference's indexed messages to the turns they make: in
// index order, contents joined when there is no content, tool calls in index order (an
// unknown field of a call still makes the call), the assistant's role when none is given,
// and attributes that are not an index or a known field passed over.
func TestIndexedMessages(t *testing.T) {
	attrs := attrMap(map[string]string{
		"llm.output_messages.2.message.role":                                      "tool",
		"llm.output_messages.2.message.content":                                   "42",
		"llm.output_messages.2.message.tool_call_id":                              "c1",
		"llm.output_messages.10.message.contents.1.message_content.text":          "world",
		"llm.output_messages.10.message.contents.0.message_content.text":          "hello",
		"llm.output_messages.10.message.contents.x.message_content.text":          "skipped",
		"llm.output_messages.10.message.contents.2.message_content.image":         "skipped",
		"llm.output_messages.0.message.role":                                      "assistant",
		"llm.output_messages.0.message.name":                                      "calc",
		"llm.output_messages.0.message.contents.0.message_content.text":           "not used: the content wins",
		"llm.output_messages.0.message.content":                                   "calling",
		"llm.output_messages.0.message.tool_calls.1.tool_call.function.name":      "add",
		"llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments": `{"a":1}`,
		"llm.output_messages.0.message.tool_calls.0.tool_call.id":                 "c0",
		"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "sub",
		"llm.output_messages.0.message.tool_calls.3.tool_call.type":               "function",
		"llm.output_messages.0.message.tool_calls.4":                              "a call, no field",
		"llm.output_messages.0.message.tool_calls.y.tool_call.id":                 "skipped",
		"llm.output_messages.0.message.other":                                     "skipped",
		"llm.output_messages.x.message.role":                                      "skipped",
		"llm.output_messages":                                                     "skipped",
		"llm.input_messages.0.message.role":                                       "user",
	})
	got, ok := indexedMessages(attrs, "llm.output_messages.")
	want := []sdk.Turn{
		{Role: "assistant", Name: "calc", Content: "calling", ToolCalls: []sdk.ToolCall{
			{ID: "c0", Name: "sub"}, {Name: "add", Arguments: `{"a":1}`}, {}, {}}},
		{Role: "tool", Content: "42", ToolCallID: "c1"},
		{Role: "assistant", Content: "hello\nworld"},
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("indexedMessages: %#v, %v\nwant %#v", got, ok, want)
	}
	if got, ok := indexedMessages(attrs, "llm.none."); ok || got != nil {
		t.Fatalf("indexedMessages of no attribute: %#v, %v; want nil, false", got, ok)
	}
}

// TestIndexed holds gen_ai.prompt.N and gen_ai.completion.N to the turns they make: the
// first completion's finish reason, tool calls in index order, the assistant's role for a
// completion without one (a prompt's stays empty), and no completion without its attributes.
func TestIndexed(t *testing.T) {
	attrs := attrMap(map[string]string{
		"gen_ai.prompt.1.content":                    "Q?",
		"gen_ai.prompt.1.role":                       "user",
		"gen_ai.prompt.0.content":                    "be brief",
		"gen_ai.prompt.2.role":                       "tool",
		"gen_ai.prompt.2.tool_call_id":               "c0",
		"gen_ai.prompt.2.finish_reason":              "not a completion's",
		"gen_ai.completion.0.finish_reason":          "tool_calls",
		"gen_ai.completion.0.tool_calls.1.name":      "add",
		"gen_ai.completion.0.tool_calls.1.arguments": `{"a":1}`,
		"gen_ai.completion.0.tool_calls.0.id":        "c0",
		"gen_ai.completion.0.tool_calls.2.type":      "function",
		"gen_ai.completion.0.tool_calls.x.id":        "skipped",
		"gen_ai.completion.0.tool_callsx.0.id":       "skipped",
		"gen_ai.completion.1.role":                   "critic",
		"gen_ai.completion.1.content":                "A.",
		"gen_ai.completion.1.finish_reason":          "not the first's",
		"gen_ai.completion.1.name":                   "skipped",
	})
	prompt, completion, finish := indexed(attrs)
	wantPrompt := []sdk.Turn{{Content: "be brief"}, {Role: "user", Content: "Q?"}, {Role: "tool", ToolCallID: "c0"}}
	wantCompletion := []sdk.Turn{
		{Role: "assistant", ToolCalls: []sdk.ToolCall{{ID: "c0"}, {Name: "add", Arguments: `{"a":1}`}, {}}},
		{Role: "critic", Content: "A."},
	}
	if !reflect.DeepEqual(prompt, wantPrompt) || !reflect.DeepEqual(completion, wantCompletion) || finish != "tool_calls" {
		t.Fatalf("indexed: %#v, %#v, %q\nwant %#v, %#v, %q", prompt, completion, finish, wantPrompt, wantCompletion, "tool_calls")
	}
	prompt, completion, finish = indexed(attrMap(map[string]string{"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Q?"}))
	if !reflect.DeepEqual(prompt, []sdk.Turn{{Role: "user", Content: "Q?"}}) || completion != nil || finish != "" {
		t.Fatalf("indexed without a completion: %#v, %#v, %q; want the prompt, nil, \"\"", prompt, completion, finish)
	}
}
