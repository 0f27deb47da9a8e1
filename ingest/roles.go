package ingest

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Role is what a span is to the reader, whatever convention it follows: a run's own span
// (an agent, a call of an agent framework, a workflow), a model call, a tool call, another
// span with GenAI content, or a span with none.
type Role uint8

// The roles.
const (
	// RoleNone is a span with no GenAI content (a web request, a query): it can only link
	// the spans below it to the ones above.
	RoleNone Role = iota
	// RoleOther is a GenAI span the reader does not build runs from (Mastra's
	// model_generation, agent_step and model_chunk, OpenInference's RETRIEVER or
	// EMBEDDING, an embeddings call).
	RoleOther
	// RoleModel is a model call: gen_ai.operation.name chat, text_completion or
	// generate_content; an OpenInference LLM span; the AI SDK's ai.*.doGenerate and
	// ai.*.doStream.
	RoleModel
	// RoleTool is a tool call: execute_tool, the AI SDK's ai.toolCall, an OpenInference
	// TOOL span, a traceloop.span.kind tool span.
	RoleTool
	// RoleAgent is an agent span, which makes a run when it arrives: gen_ai.operation.name
	// invoke_agent (Mastra's agent runs too), openinference.span.kind AGENT,
	// traceloop.span.kind agent.
	RoleAgent
	// RoleCall is a call of an agent framework that makes a run where no agent span
	// stands above or below it, once its trace is complete: the AI SDK's ai.generateText,
	// ai.streamText, ai.generateObject and ai.streamObject (the outer span), a
	// traceloop.span.kind workflow span.
	RoleCall
	// RoleChain is an OpenInference CHAIN span: at the root of its trace it makes a run
	// as RoleCall does; elsewhere it only links.
	RoleChain
)

func (r Role) String() string {
	return [...]string{"none", "other", "model", "tool", "agent", "call", "chain"}[r]
}

// Reads reports whether the reader reads spans of the role: a model or tool call, or a
// span that can make a run. Spans of other roles only link the spans below them to
// those above, and a trace without any of these makes no run.
func (r Role) Reads() bool { return r >= RoleModel }

// makesRun reports whether a span of the role can make a run of its own.
func (r Role) makesRun() bool { return r == RoleAgent || r == RoleCall || r == RoleChain }

// aiCalls are the AI SDK's outer call spans (ai.operationId, also their name), and
// aiModelCalls the model calls below them.
var (
	aiCalls      = map[string]bool{"ai.generateText": true, "ai.streamText": true, "ai.generateObject": true, "ai.streamObject": true}
	aiModelCalls = map[string]bool{"ai.generateText.doGenerate": true, "ai.streamText.doStream": true,
		"ai.generateObject.doGenerate": true, "ai.streamObject.doStream": true}
)

// SpanRole is what span is to the reader, read from its own attributes and name.
func SpanRole(span ptrace.Span) Role { return roleOf(span.Name(), span.Attributes()) }

func roleOf(name string, attrs pcommon.Map) Role {
	switch op := str(attrs, "gen_ai.operation.name"); op {
	case OpInvokeAgent:
		return RoleAgent
	case "chat", "text_completion", "generate_content":
		return RoleModel
	case "execute_tool":
		return RoleTool
	case "":
	default:
		return RoleOther
	}
	switch strings.ToUpper(str(attrs, "openinference.span.kind")) {
	case "":
	case "AGENT":
		return RoleAgent
	case "LLM":
		return RoleModel
	case "TOOL":
		return RoleTool
	case "CHAIN":
		return RoleChain
	default:
		return RoleOther
	}
	switch strings.ToLower(str(attrs, "traceloop.span.kind")) {
	case "":
	case "agent":
		return RoleAgent
	case "workflow":
		return RoleCall
	case "tool":
		return RoleTool
	default:
		return RoleOther
	}
	aiOp := firstNonEmpty(str(attrs, "ai.operationId"), name)
	switch {
	case aiCalls[aiOp]:
		return RoleCall
	case aiModelCalls[aiOp]:
		return RoleModel
	case aiOp == "ai.toolCall":
		return RoleTool
	case strings.HasPrefix(aiOp, "ai.") && hasPrefixAttr(attrs, "ai."):
		return RoleOther
	}
	if hasPrefixAttr(attrs, "gen_ai.") || hasPrefixAttr(attrs, "llm.") {
		return RoleOther
	}
	return RoleNone
}

// hasPrefixAttr reports whether attrs has a key starting with prefix.
func hasPrefixAttr(attrs pcommon.Map, prefix string) bool {
	found := false
	attrs.Range(func(k string, _ pcommon.Value) bool {
		found = strings.HasPrefix(k, prefix)
		return !found
	})
	return found
}
