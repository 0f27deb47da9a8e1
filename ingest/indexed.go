package ingest

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/scorekit/scorekit/sdk"
)

// indexedMessages reads OpenInference's messages: PREFIX N.message.{role, content,
// name, tool_call_id, contents.K.message_content.text, tool_calls.M.tool_call.{id,
// function.name, function.arguments}}. ok is false when there is none.
func indexedMessages(attrs pcommon.Map, prefix string) ([]sdk.Turn, bool) {
	slots := readSlots(attrs, prefix, func(s *messageSlot, _ int, field string, v pcommon.Value) {
		field = strings.TrimPrefix(field, "message.")
		switch field {
		case "role", "content", "tool_call_id":
			s.setTurn(field, v)
		case "name":
			s.turn.Name = v.AsString()
		default:
			if r, ok := strings.CutPrefix(field, "contents."); ok {
				if m, f, ok := cutIndex(r); ok && f == "message_content.text" {
					s.parts[m] = v.AsString()
				}
				return
			}
			if r, ok := strings.CutPrefix(field, "tool_calls."); ok {
				// Unlike the other indexes, a call's needs no field after it.
				i, f, _ := strings.Cut(r, ".")
				if m, err := strconv.Atoi(i); err == nil {
					s.setCall(m, openInferenceCallFields[strings.TrimPrefix(f, "tool_call.")], v)
				}
			}
		}
	})
	if len(slots) == 0 {
		return nil, false
	}
	turns := slotTurns(slots)
	for i := range turns {
		if turns[i].Role == "" {
			turns[i].Role = "assistant"
		}
	}
	return turns, true
}

// openInferenceCallFields maps OpenInference's tool call fields to the names setCall takes;
// any other field still makes the call.
var openInferenceCallFields = map[string]string{"id": "id", "function.name": "name", "function.arguments": "arguments"}

// indexed reads gen_ai.prompt.N.{role,content} and gen_ai.completion.N.{role,content,
// finish_reason,tool_calls.M.{id,name,arguments}}.
func indexed(attrs pcommon.Map) (prompt, completion []sdk.Turn, finish string) {
	read := func(prefix string) (map[int]*messageSlot, string) {
		finish := ""
		slots := readSlots(attrs, prefix, func(s *messageSlot, n int, field string, v pcommon.Value) {
			switch field {
			case "role", "content", "tool_call_id":
				s.setTurn(field, v)
			case "finish_reason":
				if n == 0 {
					finish = v.AsString()
				}
			default:
				if r, ok := strings.CutPrefix(field, "tool_calls."); ok {
					if m, f, ok := cutIndex(r); ok {
						s.setCall(m, f, v)
					}
				}
			}
		})
		return slots, finish
	}
	p, _ := read("gen_ai.prompt.")
	c, finish := read("gen_ai.completion.")
	if len(c) == 0 {
		return slotTurns(p), nil, ""
	}
	completion = slotTurns(c)
	for i := range completion {
		if completion[i].Role == "" {
			completion[i].Role = "assistant"
		}
	}
	return slotTurns(p), completion, finish
}

// messageSlot is one indexed message as its attributes are read: the turn, the texts of
// its contents and its tool calls, by index.
type messageSlot struct {
	turn  sdk.Turn
	parts map[int]string
	calls map[int]*sdk.ToolCall
}

// readSlots reads the attributes PREFIX N.FIELD into a slot per N, handing each field to
// set; attributes whose N is not an index are passed over.
func readSlots(attrs pcommon.Map, prefix string, set func(s *messageSlot, n int, field string, v pcommon.Value)) map[int]*messageSlot {
	slots := map[int]*messageSlot{}
	attrs.Range(func(k string, v pcommon.Value) bool {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			return true
		}
		n, field, ok := cutIndex(rest)
		if !ok {
			return true
		}
		s := slots[n]
		if s == nil {
			s = &messageSlot{parts: map[int]string{}, calls: map[int]*sdk.ToolCall{}}
			slots[n] = s
		}
		set(s, n, field, v)
		return true
	})
	return slots
}

// cutIndex splits "N.rest" into N and rest; ok is false when there is no dot or N is not
// a number.
func cutIndex(s string) (n int, rest string, ok bool) {
	idx, rest, ok := strings.Cut(s, ".")
	n, err := strconv.Atoi(idx)
	return n, rest, ok && err == nil
}

// setTurn sets the turn's role, content or tool_call_id.
func (s *messageSlot) setTurn(field string, v pcommon.Value) {
	switch field {
	case "role":
		s.turn.Role = v.AsString()
	case "content":
		s.turn.Content = v.AsString()
	case "tool_call_id":
		s.turn.ToolCallID = v.AsString()
	}
}

// setCall sets the id, name or arguments of the slot's tool call m, making the call
// whatever the field.
func (s *messageSlot) setCall(m int, field string, v pcommon.Value) {
	call := s.calls[m]
	if call == nil {
		call = &sdk.ToolCall{}
		s.calls[m] = call
	}
	switch field {
	case "id":
		call.ID = v.AsString()
	case "name":
		call.Name = v.AsString()
	case "arguments":
		call.Arguments = valueText(v)
	}
}

// slotTurns returns the slots' turns in index order: a turn without content takes its
// contents' texts in order, and its tool calls come in order.
func slotTurns(slots map[int]*messageSlot) []sdk.Turn {
	out := make([]sdk.Turn, 0, len(slots))
	for _, n := range slices.Sorted(maps.Keys(slots)) {
		s := slots[n]
		if s.turn.Content == "" && len(s.parts) > 0 {
			var text []string
			for _, k := range slices.Sorted(maps.Keys(s.parts)) {
				text = append(text, s.parts[k])
			}
			s.turn.Content = strings.Join(text, "\n")
		}
		for _, k := range slices.Sorted(maps.Keys(s.calls)) {
			s.turn.ToolCalls = append(s.turn.ToolCalls, *s.calls[k])
		}
		out = append(out, s.turn)
	}
	return out
}
