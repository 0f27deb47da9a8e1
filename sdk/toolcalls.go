package sdk

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of [Run.ToolCallsText]: a call's arguments or result longer than
// maxToolValueBytes is cut, and calls past maxToolCallsBytes of text are counted rather
// than shown, so a run that fetched whole web pages still makes a prompt of bounded size.
const (
	maxToolValueBytes = 2000
	maxToolCallsBytes = 16 << 10
)

// ToolCallsText renders what the agent did, for a judge's prompt: one numbered entry per
// tool call, in order, with its arguments and the result the run records for it:
//
//  1. cancel_event({"time":"15:00"})
//     result: {"cancelled":true}
//
// A call without a recorded result says so. Long arguments and results are cut and say
// how much was left out. It returns "" for a run without tool calls.
func (r *Run) ToolCallsText() string {
	if len(r.ToolCalls) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range r.ToolCalls {
		if b.Len() > maxToolCallsBytes {
			b.WriteString("(" + strconv.Itoa(len(r.ToolCalls)-i) + " more calls not shown)\n")
			break
		}
		name := c.Name
		if name == "" {
			name = "(unnamed tool)"
		}
		b.WriteString(strconv.Itoa(i+1) + ". " + name + "(" + clipValue(c.Arguments) + ")\n")
		if c.Result == "" {
			b.WriteString("   result: (none recorded)\n")
			continue
		}
		b.WriteString("   result: " + clipValue(c.Result) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// clipValue keeps the first maxToolValueBytes of s, cut at a character boundary, and
// says how much it left out; line breaks become spaces so an entry stays on its line.
func clipValue(s string) string {
	s = strings.TrimSpace(s)
	cut := ""
	if len(s) > maxToolValueBytes {
		n := maxToolValueBytes
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		cut = " ... (" + strconv.Itoa(len(s)-n) + " more bytes)"
		s = s[:n]
	}
	return lineBreaks.Replace(s) + cut
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
