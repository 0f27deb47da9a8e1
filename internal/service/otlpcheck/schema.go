package otlpcheck

import "google.golang.org/protobuf/encoding/protowire"

// kind is a message of the OTLP schema the walk follows. The zero kind is a field the
// schema does not name: skipped, as the decoder skips it.
type kind uint8

const (
	unknown kind = iota
	traceRequest
	resourceSpans
	scopeSpans
	span
	spanEvent
	spanLink
	spanStatus
	logsRequest
	resourceLogs
	scopeLogs
	logRecord
	resource
	entityRef
	scope
	keyValue
	anyValue
	arrayValue
	keyValueList
	numKinds
)

// field is one field of a message as the decoder reads it: its number and wire type in
// protobuf, its names in OTLP JSON (lowerCamelCase, and the proto name the decoder also
// takes), and what it holds.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	camel string
	snake string
	// msg is the message a LEN field holds; unknown for a scalar.
	msg kind
	// repeated: an array in JSON, any number of times in protobuf.
	repeated bool
	// copied: a string or bytes the decoder copies onto the heap (ids are fixed-size
	// arrays, not copies).
	copied bool
	// alloc is what the decoder allocates each time it reads the field, besides the
	// message it holds (cost) and a copied string's bytes: an AnyValue's oneof wrapper, a
	// repeated string's slot.
	alloc int64
}

// message is one message of the schema.
type message struct {
	name   string
	fields []field
	// byNum indexes fields by number (1-based; 0: none), for the numbers below its length.
	byNum [17]int8
}

// lookup returns the field numbered num, or nil.
func (m *message) lookup(num protowire.Number) *field {
	if num < protowire.Number(len(m.byNum)) {
		if i := m.byNum[num]; i > 0 {
			return &m.fields[i-1]
		}
		return nil
	}
	for i := range m.fields {
		if m.fields[i].num == num {
			return &m.fields[i]
		}
	}
	return nil
}

// indexed fills each message's byNum.
func indexed(s [numKinds]message) [numKinds]message {
	for k := range s {
		for i, f := range s[k].fields {
			if f.num < protowire.Number(len(s[k].byNum)) {
				s[k].byNum[f.num] = int8(i + 1)
			}
		}
	}
	return s
}

// named returns the field called name in JSON, or nil.
func (m *message) named(name []byte) *field {
	for i := range m.fields {
		f := &m.fields[i]
		if string(name) == f.camel || (f.snake != "" && string(name) == f.snake) {
			return f
		}
	}
	return nil
}

const (
	bytesT   = protowire.BytesType
	varintT  = protowire.VarintType
	fixed32T = protowire.Fixed32Type
	fixed64T = protowire.Fixed64Type
)

// msgField is a field holding one message; repeatedField a field holding any number.
func msgField(num protowire.Number, camel, snake string, k kind) field {
	return field{num: num, typ: bytesT, camel: camel, snake: snake, msg: k}
}

func repeatedField(num protowire.Number, camel, snake string, k kind) field {
	return field{num: num, typ: bytesT, camel: camel, snake: snake, msg: k, repeated: true}
}

func stringField(num protowire.Number, camel, snake string) field {
	return field{num: num, typ: bytesT, camel: camel, snake: snake, copied: true}
}

func scalarField(num protowire.Number, typ protowire.Type, camel, snake string) field {
	return field{num: num, typ: typ, camel: camel, snake: snake}
}

// oneof is f, a field of AnyValue's oneof.
func oneof(f field) field {
	f.alloc = 24
	return f
}

// idField is a trace or span id: bytes in protobuf, hex in JSON, held in a fixed array.
func idField(num protowire.Number, camel, snake string) field {
	return field{num: num, typ: bytesT, camel: camel, snake: snake}
}

// schema is the OTLP trace and log export requests as the OpenTelemetry Collector's pdata
// (go.opentelemetry.io/collector/pdata/internal, generated_proto_*.go) decodes them,
// field for field: what it reads is what the walk counts. TestSchemaMatchesPdata checks
// the numbers and names against pdata's own encoding.
var schema = indexed([numKinds]message{
	traceRequest: {name: "ExportTraceServiceRequest", fields: []field{
		repeatedField(1, "resourceSpans", "resource_spans", resourceSpans),
	}},
	resourceSpans: {name: "ResourceSpans", fields: []field{
		msgField(1, "resource", "", resource),
		repeatedField(2, "scopeSpans", "scope_spans", scopeSpans),
		stringField(3, "schemaUrl", "schema_url"),
		repeatedField(1000, "deprecatedScopeSpans", "deprecated_scope_spans", scopeSpans),
	}},
	scopeSpans: {name: "ScopeSpans", fields: []field{
		msgField(1, "scope", "", scope),
		repeatedField(2, "spans", "", span),
		stringField(3, "schemaUrl", "schema_url"),
	}},
	span: {name: "Span", fields: []field{
		idField(1, "traceId", "trace_id"),
		idField(2, "spanId", "span_id"),
		stringField(3, "traceState", "trace_state"),
		idField(4, "parentSpanId", "parent_span_id"),
		scalarField(16, fixed32T, "flags", ""),
		stringField(5, "name", ""),
		scalarField(6, varintT, "kind", ""),
		scalarField(7, fixed64T, "startTimeUnixNano", "start_time_unix_nano"),
		scalarField(8, fixed64T, "endTimeUnixNano", "end_time_unix_nano"),
		repeatedField(9, "attributes", "", keyValue),
		scalarField(10, varintT, "droppedAttributesCount", "dropped_attributes_count"),
		repeatedField(11, "events", "", spanEvent),
		scalarField(12, varintT, "droppedEventsCount", "dropped_events_count"),
		repeatedField(13, "links", "", spanLink),
		scalarField(14, varintT, "droppedLinksCount", "dropped_links_count"),
		msgField(15, "status", "", spanStatus),
	}},
	spanEvent: {name: "Span.Event", fields: []field{
		scalarField(1, fixed64T, "timeUnixNano", "time_unix_nano"),
		stringField(2, "name", ""),
		repeatedField(3, "attributes", "", keyValue),
		scalarField(4, varintT, "droppedAttributesCount", "dropped_attributes_count"),
	}},
	spanLink: {name: "Span.Link", fields: []field{
		idField(1, "traceId", "trace_id"),
		idField(2, "spanId", "span_id"),
		stringField(3, "traceState", "trace_state"),
		repeatedField(4, "attributes", "", keyValue),
		scalarField(5, varintT, "droppedAttributesCount", "dropped_attributes_count"),
		scalarField(6, fixed32T, "flags", ""),
	}},
	spanStatus: {name: "Status", fields: []field{
		stringField(2, "message", ""),
		scalarField(3, varintT, "code", ""),
	}},
	logsRequest: {name: "ExportLogsServiceRequest", fields: []field{
		repeatedField(1, "resourceLogs", "resource_logs", resourceLogs),
	}},
	resourceLogs: {name: "ResourceLogs", fields: []field{
		msgField(1, "resource", "", resource),
		repeatedField(2, "scopeLogs", "scope_logs", scopeLogs),
		stringField(3, "schemaUrl", "schema_url"),
		repeatedField(1000, "deprecatedScopeLogs", "deprecated_scope_logs", scopeLogs),
	}},
	scopeLogs: {name: "ScopeLogs", fields: []field{
		msgField(1, "scope", "", scope),
		repeatedField(2, "logRecords", "log_records", logRecord),
		stringField(3, "schemaUrl", "schema_url"),
	}},
	logRecord: {name: "LogRecord", fields: []field{
		scalarField(1, fixed64T, "timeUnixNano", "time_unix_nano"),
		scalarField(11, fixed64T, "observedTimeUnixNano", "observed_time_unix_nano"),
		scalarField(2, varintT, "severityNumber", "severity_number"),
		stringField(3, "severityText", "severity_text"),
		msgField(5, "body", "", anyValue),
		repeatedField(6, "attributes", "", keyValue),
		scalarField(7, varintT, "droppedAttributesCount", "dropped_attributes_count"),
		scalarField(8, fixed32T, "flags", ""),
		idField(9, "traceId", "trace_id"),
		idField(10, "spanId", "span_id"),
		stringField(12, "eventName", "event_name"),
	}},
	resource: {name: "Resource", fields: []field{
		repeatedField(1, "attributes", "", keyValue),
		scalarField(2, varintT, "droppedAttributesCount", "dropped_attributes_count"),
		repeatedField(3, "entityRefs", "entity_refs", entityRef),
	}},
	entityRef: {name: "EntityRef", fields: []field{
		stringField(1, "schemaUrl", "schema_url"),
		stringField(2, "type", ""),
		{num: 3, typ: bytesT, camel: "idKeys", snake: "id_keys", repeated: true, copied: true, alloc: slot(16)},
		{num: 4, typ: bytesT, camel: "descriptionKeys", snake: "description_keys", repeated: true, copied: true, alloc: slot(16)},
	}},
	scope: {name: "InstrumentationScope", fields: []field{
		stringField(1, "name", ""),
		stringField(2, "version", ""),
		repeatedField(3, "attributes", "", keyValue),
		scalarField(4, varintT, "droppedAttributesCount", "dropped_attributes_count"),
	}},
	keyValue: {name: "KeyValue", fields: []field{
		stringField(1, "key", ""),
		msgField(2, "value", "", anyValue),
		scalarField(3, varintT, "keyStrindex", "key_strindex"),
	}},
	// Each field read allocates the oneof's wrapper (AnyValue_StringValue and so on, 8 to
	// 24 bytes), even when the same AnyValue had one.
	anyValue: {name: "AnyValue", fields: []field{
		oneof(stringField(1, "stringValue", "string_value")),
		oneof(scalarField(2, varintT, "boolValue", "bool_value")),
		oneof(scalarField(3, varintT, "intValue", "int_value")),
		oneof(scalarField(4, fixed64T, "doubleValue", "double_value")),
		oneof(msgField(5, "arrayValue", "array_value", arrayValue)),
		oneof(msgField(6, "kvlistValue", "kvlist_value", keyValueList)),
		oneof(stringField(7, "bytesValue", "bytes_value")),
		oneof(scalarField(8, varintT, "stringValueStrindex", "string_value_strindex")),
	}},
	arrayValue: {name: "ArrayValue", fields: []field{
		repeatedField(1, "values", "", anyValue),
	}},
	keyValueList: {name: "KeyValueList", fields: []field{
		repeatedField(1, "values", "", keyValue),
	}},
})
