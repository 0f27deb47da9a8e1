// Package otlpcheck reads an OTLP export request before it is decoded: it bounds how
// deep the request nests, refuses malformed wire data, and counts what decoding it will
// allocate, so the caller can refuse a request that would cost more memory than it allows
// before the decoder spends it.
//
// # Why
//
// The OpenTelemetry Collector's decoder (pdata) recurses once per level of a nested
// attribute value (an array in an array ...) with no limit: a 20 MiB protobuf body of
// arrays nested two million deep overflows the goroutine stack, which is fatal to the
// whole process, and the same nesting in OTLP JSON grows a stack of hundreds of MB. A
// body of empty spans or empty attributes costs 20 to 100 times its size once decoded.
// Neither can be caught after decoding.
//
// # How
//
// The walk follows the schema of the request as pdata decodes it (ExportTraceServiceRequest
// -> ResourceSpans -> ScopeSpans -> Span -> attributes, events, links -> KeyValue ->
// AnyValue -> ArrayValue or KeyValueList -> ...; ExportLogsServiceRequest -> ResourceLogs
// -> ScopeLogs -> LogRecord, with its body an AnyValue), over the protobuf wire format
// (google.golang.org/protobuf/encoding/protowire) or the OTLP JSON text. It keeps its own
// stack of the messages it is inside, a slice sized once from the depth limit, so it
// never recurses and never allocates per element; a value nested past the limit stops it
// there. Fields the schema does not name are skipped, as the decoder skips them (a group,
// which no OTLP message has, by protowire, which stops at 10,000 levels).
// [Counts.DecodedBytes] turns the counts into the bytes pdata keeps once it has decoded
// the request, from costs measured by BenchmarkDecodedCost.
package otlpcheck

import (
	"fmt"
	"strings"
)

// Signal is the kind of export request, which says the schema the walk follows.
type Signal uint8

// The signals.
const (
	// Traces is an ExportTraceServiceRequest (POST /v1/traces).
	Traces Signal = iota + 1
	// Logs is an ExportLogsServiceRequest (POST /v1/logs).
	Logs
)

func (s Signal) root() (kind, error) {
	switch s {
	case Traces:
		return traceRequest, nil
	case Logs:
		return logsRequest, nil
	}
	return unknown, fmt.Errorf("otlpcheck: signal %d is neither Traces nor Logs", s)
}

// DefaultMaxDepth is Limits.MaxDepth's default. A span attribute holds a scalar or an
// array of scalars (2 levels); a log body holds what a structured logger wrote, rarely
// past ten. Sixty-four is far beyond both and far below what costs anything to decode.
const DefaultMaxDepth = 64

// Limits bound what the walk accepts.
type Limits struct {
	// MaxDepth bounds how deep a value (an attribute's value, a log body) nests: a string
	// is 1 deep, an array of strings 2, a map holding an array of strings 3. It bounds as
	// much the nesting of a field the schema does not name (OTLP JSON). Optional. Default
	// is DefaultMaxDepth. The decoder after the walk recurses once per level, so a limit
	// past DepthCeiling is taken as DepthCeiling.
	MaxDepth int
}

// DepthCeiling is the most Limits.MaxDepth takes: the limit protobuf-go and jsoniter keep.
const DepthCeiling = 10_000

func (l Limits) maxDepth() int {
	if l.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return min(l.MaxDepth, DepthCeiling)
}

// Counts is what decoding a request allocates, as the walk counted it. A message given
// more than once where one is expected is counted each time, as the decoder allocates it
// each time.
type Counts struct {
	// Records is the request's spans (Traces) or log records (Logs).
	Records int64
	// Attributes is its key-value pairs: attributes, and the entries of map values.
	Attributes int64
	// Values is its values: one per attribute, log body and element of an array value.
	Values int64
	// Strings is the strings and bytes decoding copies; StringBytes their length in the
	// body.
	Strings, StringBytes int64
	// Depth is how deep the deepest value nests (as Limits.MaxDepth counts).
	Depth int

	messages [numKinds]int64
	// alloc is the bytes decoding allocates for fields: copied strings, wrappers.
	alloc int64
	// skipped counts the fields the schema does not name (for the tests: pdata's own
	// encoding has none).
	skipped int64
}

// field counts a field read: what it allocates, and a copied string of n bytes.
func (c *Counts) field(f *field, n int) {
	c.alloc += f.alloc
	if f.copied {
		c.Strings++
		c.StringBytes += int64(n)
		c.alloc += heapSize(n)
	}
}

func (c *Counts) message(k kind) {
	c.messages[k]++
	switch k {
	case span, logRecord:
		c.Records++
	case keyValue:
		c.Attributes++
	case anyValue:
		c.Values++
	}
}

// Errors of a walk: a *DepthError, or a *SyntaxError. Both are the sender's: the request
// is refused (400).
var (
	_ error = (*DepthError)(nil)
	_ error = (*SyntaxError)(nil)
)

// DepthError is a value nested past Limits.MaxDepth.
type DepthError struct {
	// Limit is the Limits.MaxDepth passed.
	Limit int
	// Path is where the value is: "resourceSpans[0].scopeSpans[0].spans[3].attributes[1]"
	// (with the attribute's key when it came before its value).
	Path string
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("%s nests more than %d levels deep (an array or map inside a value is one level); "+
		"send attribute values as scalars or flat arrays, or a nested structure as a JSON string", e.Path, e.Limit)
}

// SyntaxError is a body that is not the request in its encoding.
type SyntaxError struct {
	// Offset is the byte of the (decompressed) body where the walk stopped.
	Offset int
	// Path is the message or field the walk was in, as DepthError.Path says it.
	Path string
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("at byte %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("at byte %d, in %s: %s", e.Offset, e.Path, e.Msg)
}

// step is one level of the path a walk is in, for an error: the field it came through,
// the index of the element when the field repeats, and for a KeyValue its key.
type step struct {
	name  string
	index int32
	list  bool
	key   []byte
}

// pathOf writes the steps as a path, up to the first value: the attribute is what the
// sender needs, not the 64 levels below it.
func pathOf(steps []step) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
		if s.list {
			fmt.Fprintf(&b, "[%d]", s.index)
		}
		if s.key != nil {
			k := s.key
			if len(k) > 64 {
				k = k[:64]
			}
			fmt.Fprintf(&b, " (key %q)", k)
		}
		if s.name == "value" || s.name == "body" {
			break
		}
	}
	return b.String()
}
