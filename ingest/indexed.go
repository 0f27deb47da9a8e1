package ingest

import (
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/scorekit/scorekit/sdk"
)

// indexedMessages reads OpenInference's messages: PREFIX N.message.{role, content,
// name, tool_call_id, contents.K.message_content.text, tool_calls.M.tool_call.{id,
// function.name, function.arguments}}. ok is false when there is none.
func indexedMessages(attrs pcommon.Map, prefix string) ([]sdk.Turn, bool) {
	slots := map[int]*messageSlot{}
	attrs.Range(func(k string, v pcommon.Value) bool {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			return true
		}
		idx, field, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return true
		}
		field = strings.TrimPrefix(field, "message.")
		s := slots[n]
		if s == nil {
			s = &messageSlot{parts: map[int]string{}, calls: map[int]*sdk.ToolCall{}}
			slots[n] = s
		}
		switch field {
		case "role":
			s.turn.Role = v.AsString()
		case "content":
			s.turn.Content = v.AsString()
		case "name":
			s.turn.Name = v.AsString()
		case "tool_call_id":
			s.turn.ToolCallID = v.AsString()
		default:
			if r, ok := strings.CutPrefix(field, "contents."); ok {
				i, f, _ := strings.Cut(r, ".")
				if m, err := strconv.Atoi(i); err == nil && f == "message_content.text" {
					s.parts[m] = v.AsString()
				}
				return true
			}
			r, ok := strings.CutPrefix(field, "tool_calls.")
			if !ok {
				return true
			}
			i, f, _ := strings.Cut(r, ".")
			m, err := strconv.Atoi(i)
			if err != nil {
				return true
			}
			call := s.calls[m]
			if call == nil {
				call = &sdk.ToolCall{}
				s.calls[m] = call
			}
			switch strings.TrimPrefix(f, "tool_call.") {
			case "id":
				call.ID = v.AsString()
			case "function.name":
				call.Name = v.AsString()
			case "function.arguments":
				call.Arguments = valueText(v)
			}
		}
		return true
	})
	if len(slots) == 0 {
		return nil, false
	}
	return slotTurns(slots), true
}

// messageSlot is one message of indexedMessages as its attributes are read: the turn, the
// texts of its contents and its tool calls, by index.
type messageSlot struct {
	turn  sdk.Turn
	parts map[int]string
	calls map[int]*sdk.ToolCall
}

// slotTurns returns the slots' turns in index order: a turn without content takes its
// contents' texts in order, its tool calls come in order, and a turn without a role is
// the assistant's.
func slotTurns(slots map[int]*messageSlot) []sdk.Turn {
	idx := make([]int, 0, len(slots))
	for n := range slots {
		idx = append(idx, n)
	}
	sort.Ints(idx)
	out := make([]sdk.Turn, 0, len(idx))
	for _, n := range idx {
		s := slots[n]
		if s.turn.Content == "" && len(s.parts) > 0 {
			keys := make([]int, 0, len(s.parts))
			for k := range s.parts {
				keys = append(keys, k)
			}
			sort.Ints(keys)
			var text []string
			for _, k := range keys {
				text = append(text, s.parts[k])
			}
			s.turn.Content = strings.Join(text, "\n")
		}
		keys := make([]int, 0, len(s.calls))
		for k := range s.calls {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			s.turn.ToolCalls = append(s.turn.ToolCalls, *s.calls[k])
		}
		if s.turn.Role == "" {
			s.turn.Role = "assistant"
		}
		out = append(out, s.turn)
	}
	return out
}

// indexed reads gen_ai.prompt.N.{role,content} and gen_ai.completion.N.{role,content,
// finish_reason,tool_calls.M.{id,name,arguments}}.
func indexed(attrs pcommon.Map) (prompt, completion []sdk.Turn, finish string) {
	type slot struct {
		turn  sdk.Turn
		calls map[int]*sdk.ToolCall
	}
	read := func(prefix string) (map[int]*slot, string) {
		slots := map[int]*slot{}
		finish := ""
		attrs.Range(func(k string, v pcommon.Value) bool {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok {
				return true
			}
			idx, field, ok := strings.Cut(rest, ".")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				return true
			}
			s := slots[n]
			if s == nil {
				s = &slot{calls: map[int]*sdk.ToolCall{}}
				slots[n] = s
			}
			switch field {
			case "role":
				s.turn.Role = v.AsString()
			case "content":
				s.turn.Content = v.AsString()
			case "tool_call_id":
				s.turn.ToolCallID = v.AsString()
			case "finish_reason":
				if n == 0 {
					finish = v.AsString()
				}
			default:
				c, f, ok := strings.Cut(strings.TrimPrefix(field, "tool_calls."), ".")
				m, err := strconv.Atoi(c)
				if !strings.HasPrefix(field, "tool_calls.") || !ok || err != nil {
					return true
				}
				call := s.calls[m]
				if call == nil {
					call = &sdk.ToolCall{}
					s.calls[m] = call
				}
				switch f {
				case "id":
					call.ID = v.AsString()
				case "name":
					call.Name = v.AsString()
				case "arguments":
					call.Arguments = valueText(v)
				}
			}
			return true
		})
		return slots, finish
	}
	ordered := func(slots map[int]*slot) []sdk.Turn {
		idx := make([]int, 0, len(slots))
		for n := range slots {
			idx = append(idx, n)
		}
		sort.Ints(idx)
		out := make([]sdk.Turn, 0, len(idx))
		for _, n := range idx {
			s := slots[n]
			calls := make([]int, 0, len(s.calls))
			for m := range s.calls {
				calls = append(calls, m)
			}
			sort.Ints(calls)
			for _, m := range calls {
				s.turn.ToolCalls = append(s.turn.ToolCalls, *s.calls[m])
			}
			out = append(out, s.turn)
		}
		return out
	}
	p, _ := read("gen_ai.prompt.")
	c, finish := read("gen_ai.completion.")
	if len(c) == 0 {
		return ordered(p), nil, ""
	}
	completion = ordered(c)
	for i := range completion {
		if completion[i].Role == "" {
			completion[i].Role = "assistant"
		}
	}
	return ordered(p), completion, finish
}
