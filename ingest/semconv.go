package ingest

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/scorekit/scorekit/sdk"
)

// semMessage is a message of gen_ai.input.messages or gen_ai.output.messages; content
// and tool_calls are read too, for instrumentations that write OpenAI's shape there.
type semMessage struct {
	Role         string          `json:"role"`
	Name         string          `json:"name"`
	Parts        []semPart       `json:"parts"`
	FinishReason string          `json:"finish_reason"`
	Content      json.RawMessage `json:"content"`
	ToolCalls    []sdk.ToolCall  `json:"tool_calls"`
	ToolCallID   string          `json:"tool_call_id"`
}

// semPart is one typed part: text, tool_call, tool_call_response, or one not kept (blob,
// file_data, reasoning ...).
type semPart struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ID        json.RawMessage `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Response  json.RawMessage `json:"response"`
}

// semMessages reads an attribute of messages of typed parts, and the first finish reason
// among them; a value in another form is read as text, one turn of role.
func semMessages(attrs pcommon.Map, k, role string) ([]sdk.Turn, string) {
	v, ok := attrs.Get(k)
	if !ok {
		return nil, ""
	}
	var msgs []semMessage
	if raw := rawJSON(v); raw == nil || decodeJSON(raw, &msgs) != nil {
		var one semMessage
		if raw == nil || decodeJSON(raw, &one) != nil || one.Role == "" {
			if s := answerText(decodeJSONValue(v.AsRaw())); s != "" {
				return []sdk.Turn{{Role: role, Content: s}}, ""
			}
			return nil, ""
		}
		msgs = []semMessage{one}
	}
	var out []sdk.Turn
	finish := ""
	for _, m := range msgs {
		out = append(out, turnsOfSem(m)...)
		if finish == "" {
			finish = m.FinishReason
		}
	}
	return out, finish
}

// rawJSON is an attribute's JSON: a string's text, or a structured value encoded.
func rawJSON(v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return []byte(v.Str())
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		b, err := json.Marshal(v.AsRaw())
		if err != nil {
			return nil
		}
		return b
	}
	return nil
}

// textAttr reads an attribute of text: typed parts (gen_ai.system_instructions' JSON),
// a JSON string, or plain text as it is.
func textAttr(attrs pcommon.Map, k string) string {
	v, ok := attrs.Get(k)
	if !ok {
		return ""
	}
	if raw := rawJSON(v); raw != nil {
		var parts []semPart
		if decodeJSON(raw, &parts) == nil && len(parts) > 0 {
			if s := partsText(parts); s != "" {
				return s
			}
		}
	}
	return textOf(decodeJSONValue(v.AsRaw()))
}

// turnsOfSem maps a message of typed parts to turns: its text and tool calls, and one tool
// turn per tool call response.
func turnsOfSem(m semMessage) []sdk.Turn {
	t := sdk.Turn{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	var text []string
	var out []sdk.Turn
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if s := rawText(p.Content); s != "" {
				text = append(text, s)
			}
		case "tool_call":
			t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{ID: rawText(p.ID), Name: p.Name, Arguments: rawText(p.Arguments)})
		case "tool_call_response":
			out = append(out, sdk.Turn{Role: "tool", ToolCallID: rawText(p.ID), Content: rawText(p.Response)})
		}
	}
	if len(m.Parts) == 0 && len(m.Content) > 0 {
		var c any
		if json.Unmarshal(m.Content, &c) == nil {
			text = append(text, textOf(c))
		}
	}
	t.Content = strings.Join(text, "\n")
	if t.Content != "" || len(t.ToolCalls) > 0 || len(out) == 0 {
		out = append([]sdk.Turn{t}, out...)
	}
	return out
}

func partsText(parts []semPart) string {
	var text []string
	for _, p := range parts {
		if p.Type == "text" {
			if s := rawText(p.Content); s != "" {
				text = append(text, s)
			}
		}
	}
	return strings.Join(text, "\n")
}
