package otlpcheck

// What pdata (v1.70) keeps of each message it decodes, in bytes on the heap: the struct
// (rounded up to Go's size class) and, for a message that sits in a slice, its slot there
// twice over, since a slice grown by append holds up to twice the elements it has. A
// message embedded in its parent (a span's status, a resource, a scope) costs nothing of
// its own. BenchmarkDecodedCost measures each, and TestDecodedBytesCovers checks the
// estimate stays above what decoding really keeps, so a newer pdata that costs more fails
// the test rather than the budget.
var cost = [numKinds]int64{
	traceRequest:  64,
	resourceSpans: 128 + slot(8), // *ResourceSpans in []*ResourceSpans
	scopeSpans:    112 + slot(8), // *ScopeSpans
	span:          208 + slot(8), // *Span: 196 bytes of fields
	spanEvent:     64 + slot(8),  // *SpanEvent
	spanLink:      80 + slot(8),  // *SpanLink
	logsRequest:   64,            //
	resourceLogs:  128 + slot(8), // *ResourceLogs
	scopeLogs:     112 + slot(8), // *ScopeLogs
	logRecord:     128 + slot(8), // *LogRecord: 124 bytes of fields
	entityRef:     80 + slot(8),  // *EntityRef
	keyValue:      slot(40),      // KeyValue in []KeyValue
	anyValue:      slot(16),      // AnyValue in []AnyValue (an attribute's is in its KeyValue)
	arrayValue:    32,            // *ArrayValue
	keyValueList:  32,            // *KeyValueList
	// A span's status, a resource and a scope are embedded in their parent.
}

// slot is what an element of size bytes costs in a slice grown by append.
func slot(size int64) int64 { return 2 * size }

// heapSize is what allocating n bytes takes: n rounded up to Go's size classes (which
// waste at most an eighth above 128 bytes), or to whole pages past 32 KiB.
func heapSize(n int) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 16:
		return 16
	case n > 32<<10:
		return int64((n + 8191) &^ 8191)
	}
	step := 16
	for p := 256; p <= n; p <<= 1 {
		step = p / 8
	}
	return int64((n + step - 1) / step * step)
}

// DecodedBytes estimates what pdata keeps on the heap once it has decoded the request:
// its messages and the strings it copies. Decoding allocates more than it keeps (a slice
// that grows leaves its smaller arrays to the collector); what it keeps is what stays
// while the request is handled.
func (c Counts) DecodedBytes() int64 {
	n := c.alloc
	for k, m := range c.messages {
		n += m * cost[k]
	}
	return n
}
