package service

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/internal/service/redact"
)

// A span kept while it waits for its trace's agent span is stored, so it is redacted as
// a run is before it is stored: every string it carries (its name, its attributes, its
// events' and links' attributes, its status message, its resource's and scope's
// attributes), except what names its run (spanKeep). The agent span, which names the
// run, is kept without its body. What was redacted is counted in the span itself
// (redactedAttr), and the counts go to the run it joins, when its agent span arrives.

// spanKeep are the attributes redaction leaves as they are: they name the agent whose run
// the span joins, or its GenAI operation.
var spanKeep = map[string]bool{"gen_ai.agent.name": true, "gen_ai.operation.name": true, "service.name": true}

// redactedAttr is the attribute of a kept span that counts what redaction replaced in it,
// as JSON ({"email": 2}); taken off again before the span makes a run.
const redactedAttr = "scorekit.redacted"

// redactSpan redacts the span of td (which holds it alone, with its resource and scope)
// with red, and records the counts on the span. Counts a sender put there are dropped
// first: only the service's own are carried.
func redactSpan(td ptrace.Traces, red *redact.Redactor) {
	rs := td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	span := ss.Spans().At(0)
	span.Attributes().Remove(redactedAttr)
	if red == nil {
		return
	}
	counts := redact.Counts{}
	span.SetName(red.Text(span.Name(), counts))
	redactMap(rs.Resource().Attributes(), red, counts)
	redactMap(ss.Scope().Attributes(), red, counts)
	redactMap(span.Attributes(), red, counts)
	for i := range span.Events().Len() {
		redactMap(span.Events().At(i).Attributes(), red, counts)
	}
	for i := range span.Links().Len() {
		redactMap(span.Links().At(i).Attributes(), red, counts)
	}
	if msg := span.Status().Message(); msg != "" {
		span.Status().SetMessage(red.Text(msg, counts))
	}
	if len(counts) == 0 {
		return
	}
	b, _ := json.Marshal(counts) // a map of ints
	span.Attributes().PutStr(redactedAttr, string(b))
}

// redactMap redacts the string values of m, at any depth, but those of spanKeep's keys.
func redactMap(m pcommon.Map, red *redact.Redactor, counts redact.Counts) {
	m.Range(func(k string, v pcommon.Value) bool {
		if !spanKeep[k] {
			redactValue(v, red, counts)
		}
		return true
	})
}

func redactValue(v pcommon.Value, red *redact.Redactor, counts redact.Counts) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := v.Str()
		// GenAI messages travel as JSON text: redact the strings inside, so a pattern
		// cannot cut through the document's quoting.
		if t := strings.TrimSpace(s); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
			if out, c, err := red.JSON([]byte(s)); err == nil {
				for k, n := range c {
					counts[k] += n
				}
				v.SetStr(string(out))
				return
			}
		}
		v.SetStr(red.Text(s, counts))
	case pcommon.ValueTypeMap:
		redactMap(v.Map(), red, counts)
	case pcommon.ValueTypeSlice:
		sl := v.Slice()
		for i := range sl.Len() {
			redactValue(sl.At(i), red, counts)
		}
	}
}

// takeRedacted removes the counts redactSpan recorded on the spans of td and returns
// their sum (empty when there are none).
func takeRedacted(td ptrace.Traces) redact.Counts {
	sum := redact.Counts{}
	for i := range td.ResourceSpans().Len() {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				attrs := spans.At(k).Attributes()
				v, ok := attrs.Get(redactedAttr)
				if !ok {
					continue
				}
				var c redact.Counts
				_ = json.Unmarshal([]byte(v.Str()), &c) // written by redactSpan; unreadable counts count nothing
				for kind, n := range c {
					sum[kind] += n
				}
				attrs.Remove(redactedAttr)
			}
		}
	}
	return sum
}
