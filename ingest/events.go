package ingest

import (
	"encoding/json"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/scorekit/scorekit/sdk"
)

// event is a GenAI event: a span event, or a log record joined to its span.
type event struct {
	name  string
	attrs map[string]any
	time  uint64
}

// logEvent reads a log record as an event: its name is the record's event name, else its
// event.name attribute; its body, when a map, is laid over its attributes, and any other
// body is its content.
func logEvent(lr plog.LogRecord) event {
	attrs := lr.Attributes().AsRaw()
	name := lr.EventName()
	if name == "" {
		name, _ = attrs["event.name"].(string)
	}
	switch b := lr.Body(); b.Type() {
	case pcommon.ValueTypeMap:
		for k, v := range b.Map().AsRaw() {
			attrs[k] = v
		}
	case pcommon.ValueTypeEmpty:
	default:
		if body := decodeJSONValue(b.AsRaw()); body != nil {
			if m, ok := body.(map[string]any); ok {
				for k, v := range m {
					attrs[k] = v
				}
			} else {
				attrs["content"] = body
			}
		}
	}
	t := uint64(lr.Timestamp())
	if t == 0 {
		t = uint64(lr.ObservedTimestamp())
	}
	return event{name: name, attrs: attrs, time: t}
}

// events are the span's own events and the log records joined to it.
func (sp *otelSpan) events() []event {
	evs := sp.span.Events()
	out := make([]event, 0, evs.Len()+len(sp.logs))
	for i := range evs.Len() {
		e := evs.At(i)
		out = append(out, event{name: e.Name(), attrs: e.Attributes().AsRaw(), time: uint64(e.Timestamp())})
	}
	return append(out, sp.logs...)
}

// eventRoles are the message events of the conventions before v1.37, by the role they
// carry.
var eventRoles = map[string]string{
	"gen_ai.system.message":    "system",
	"gen_ai.user.message":      "user",
	"gen_ai.assistant.message": "assistant",
	"gen_ai.tool.message":      "tool",
}

// eventMessages reads messages recorded as events (span events or log records): the
// message events and gen_ai.choice (the output), or gen_ai.content.prompt and
// gen_ai.content.completion. ok is false when there is no choice or completion event.
func eventMessages(evs []event) (input, output []sdk.Turn, finish string, ok bool) {
	for _, e := range evs {
		switch {
		case eventRoles[e.name] != "":
			body := eventBody(e.attrs)
			input = append(input, bodyTurn(body, eventRoles[e.name]))
		case e.name == "gen_ai.choice":
			body := eventBody(e.attrs)
			msg := body
			if m, isMap := decodeJSONValue(body["message"]).(map[string]any); isMap {
				msg = m
			}
			output = append(output, bodyTurn(msg, "assistant"))
			if f, _ := body["finish_reason"].(string); finish == "" {
				finish = f
			}
			ok = true
		case e.name == "gen_ai.content.prompt":
			input = append(input, messagesValue(e.attrs, "gen_ai.prompt", "user")...)
		case e.name == "gen_ai.content.completion":
			output = append(output, messagesValue(e.attrs, "gen_ai.completion", "assistant")...)
			ok = true
		}
	}
	return input, output, finish, ok
}

// eventBody is an event's body: its attributes, with the fields of a JSON object in
// gen_ai.event.content laid over them.
func eventBody(attrs map[string]any) map[string]any {
	body := make(map[string]any, len(attrs))
	for k, v := range attrs {
		body[k] = v
	}
	if c, isMap := decodeJSONValue(body["gen_ai.event.content"]).(map[string]any); isMap {
		for k, v := range c {
			body[k] = v
		}
	}
	return body
}

// bodyTurn reads a message body ({role, content, tool_calls, id}) as a turn.
func bodyTurn(body map[string]any, role string) sdk.Turn {
	content, isText := body["content"].(string) // a tool's JSON result stays as written
	if !isText {
		content = textOf(body["content"])
	}
	t := sdk.Turn{Role: role, Content: content}
	if r, _ := body["role"].(string); r != "" && role == "assistant" {
		t.Role = r
	}
	if id, _ := body["id"].(string); role == "tool" {
		t.ToolCallID = id
	}
	if calls := decodeJSONValue(body["tool_calls"]); calls != nil {
		var tcs []sdk.ToolCall
		if json.Unmarshal(mustJSON(calls), &tcs) == nil {
			t.ToolCalls = tcs
		}
	}
	return t
}

// messagesValue reads a value that holds messages in OpenAI's shape (JSON text or a
// structured value), or plain text as one message of role.
func messagesValue(attrs map[string]any, key, role string) []sdk.Turn {
	v, ok := attrs[key]
	if !ok {
		return nil
	}
	raw := decodeJSONValue(v)
	var turns []sdk.Turn
	if json.Unmarshal(mustJSON(raw), &turns) == nil {
		return turns
	}
	if s := textOf(raw); s != "" {
		return []sdk.Turn{{Role: role, Content: s}}
	}
	return nil
}
