package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
)

// LogsResult says what IngestLogs did with the log records of one request.
type LogsResult struct {
	// Records is how many log records the request held.
	Records int `json:"log_records"`
	// Kept is how many were kept for their span's run.
	Kept int `json:"kept"`
	// Ignored is how many were taken and not kept: records with no trace or span id,
	// records that are not GenAI events. They are not errors.
	Ignored int `json:"ignored"`
	// Rejected is how many were not taken; Errors say why.
	Rejected int      `json:"rejected"`
	Errors   []string `json:"errors,omitempty"`

	ignoredWhy []string
}

// Message is the result's errors and notes in one line, for OTLP's partial success
// answer; "" when every record was kept.
func (r LogsResult) Message() string {
	var parts []string
	if r.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d log records rejected: %s", r.Rejected, r.Records, strings.Join(r.Errors, "; ")))
	}
	if r.Ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d log records ignored (%s)", r.Ignored, r.Records, strings.Join(r.ignoredWhy, "; ")))
	}
	return strings.Join(parts, "; ")
}

func (r *LogsResult) reject(n int, reason string) {
	r.Rejected += n
	r.Errors = addReason(r.Errors, reason)
}

// ignore counts n records ignored; the reasons are few (a record with no span, or not a
// GenAI event), under addReason's cap.
func (r *LogsResult) ignore(n int, why string) {
	r.Ignored += n
	r.ignoredWhy = addReason(r.ignoredWhy, why)
}

// IngestLogs takes the log records of one OTLP export request (ld) for tenant t: the GenAI
// events (gen_ai.user.message, gen_ai.choice ...) that instrumentations such as
// OpenTelemetry's own record as log records, each joined to its span by trace and span
// id. They wait in the store as spans do, redacted, counted in the tenant's open bytes
// (Config.MaxOpenSpanBytes), until the run their span joins is made (IngestTraces for an
// agent's, CompleteTraces for the runs that need the whole trace) or the trace's window
// ends. A record sent again (the same trace, span, event name, time and body) is taken
// again without effect; a record whose span's run was made already is rejected and
// counted, never attached. A record with no span context, or that is not a GenAI event
// (its event name, or its event.name attribute, does not start with gen_ai.), is ignored
// and counted.
func (s *Service) IngestLogs(ctx context.Context, t store.Tenant, ld plog.Logs) (LogsResult, error) {
	now := time.Now()
	res := LogsResult{Records: ld.LogRecordCount()}
	var tally ingestTally
	tally.add("log_records", res.Records)

	type record struct {
		rl    plog.ResourceLogs
		sl    plog.ScopeLogs
		lr    plog.LogRecord
		key   store.OpenLog
		trace string
	}
	var (
		recs   []*record
		traces []string
		tseen  = map[string]bool{}
		noCtx  int
		notGen int
	)
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				if lr.TraceID().IsEmpty() || lr.SpanID().IsEmpty() {
					noCtx++
					continue
				}
				name := lr.EventName()
				if name == "" {
					if v, ok := lr.Attributes().Get("event.name"); ok {
						name = v.AsString()
					}
				}
				if !strings.HasPrefix(name, "gen_ai.") {
					notGen++
					continue
				}
				r := &record{rl: rl, sl: sl, lr: lr, trace: lr.TraceID().String()}
				r.key = store.OpenLog{TraceID: r.trace, SpanID: lr.SpanID().String(), EventName: name,
					TimeNanos: int64(firstTime(lr)), BodyHash: bodyHash(lr), Seq: int64(len(recs))}
				recs = append(recs, r)
				if !tseen[r.trace] {
					tseen[r.trace] = true
					traces = append(traces, r.trace)
				}
			}
		}
	}
	if noCtx > 0 {
		res.ignore(noCtx, "no trace or span id: a GenAI event joins its span by them; emit it inside the span")
		tally.add("ignored_log_records:"+IgnoredNoSpanContext, noCtx)
	}
	if notGen > 0 {
		res.ignore(notGen, "not a GenAI event: no event name starting gen_ai.")
		tally.add("ignored_log_records:"+IgnoredNoGenAI, notGen)
	}
	if len(recs) == 0 {
		return res, s.saveTally(ctx, t, &tally)
	}
	known, err := s.st.OpenLogs(ctx, t.ID, traces, now, false)
	if err != nil {
		return res, err
	}
	seen := map[logKey]bool{}
	for _, k := range known {
		seen[keyOf(k)] = true
	}
	used, err := s.st.UsedSpans(ctx, t.ID, traces, now)
	if err != nil {
		return res, err
	}
	done, err := s.st.DoneTraces(ctx, t.ID, traces)
	if err != nil {
		return res, err
	}
	var (
		waiting []*record
		late    []string
	)
	for _, r := range recs {
		switch {
		case seen[keyOf(r.key)]:
			// sent before: taken again without effect
		case done[r.trace] || used[r.trace+"/"+r.key.SpanID]:
			late = append(late, r.trace)
		default:
			seen[keyOf(r.key)] = true
			waiting = append(waiting, r)
		}
	}
	if len(late) > 0 {
		res.reject(len(late), "log records arrived after the run of their span was made; a run is made once: "+
			"export log records before their span ends, or with it (a batch log record processor flushed with the span's)")
		tally.drop("log_record", DropLate, len(late), late...)
	}
	if len(waiting) == 0 {
		return res, s.saveTally(ctx, t, &tally)
	}
	red, err := s.redactor(t)
	if err != nil {
		return res, err
	}
	candidates := make([]store.OpenLog, 0, len(waiting))
	var touch []store.TraceTouch
	tt := map[string]bool{}
	for _, r := range waiting {
		o := r.key
		if o.Record, err = oneLog(r.rl, r.sl, r.lr, red); err != nil {
			return res, err
		}
		candidates = append(candidates, o)
		if !tt[r.trace] {
			tt[r.trace] = true
			touch = append(touch, store.TraceTouch{TraceID: r.trace})
		}
	}
	expires := now.Add(s.opts.TraceWindow)
	var kept []store.OpenLog
	err = s.st.WithOpenSpans(ctx, t.ID, now, func(tx *store.Tx, taken int64) error {
		room := s.opts.MaxOpenSpanBytes - taken // spans and log records
		kept = kept[:0]
		for _, o := range candidates {
			if int64(len(o.Record)) > room {
				continue
			}
			room -= int64(len(o.Record))
			kept = append(kept, o)
		}
		if err := tx.TouchOpenTraces(ctx, t.ID, touch, now, expires); err != nil {
			return err
		}
		return tx.PutOpenLogs(ctx, t.ID, kept, expires)
	})
	if err != nil {
		return res, err
	}
	res.Kept = len(kept)
	if full := len(candidates) - len(kept); full > 0 {
		res.reject(full, fmt.Sprintf("tenant %q keeps at most %d bytes of spans and log records of open traces (serve --otlp-max-open-bytes), "+
			"and they are full: they wait for their trace's run for %s after its last span or record arrived", t.Name, s.opts.MaxOpenSpanBytes, s.opts.TraceWindow))
		var ids []string
		keptKeys := map[logKey]bool{}
		for _, o := range kept {
			keptKeys[keyOf(o)] = true
		}
		for _, o := range candidates {
			if !keptKeys[keyOf(o)] {
				ids = append(ids, o.TraceID)
			}
		}
		tally.drop("log_record", DropOverCap, full, ids...)
	}
	return res, s.saveTally(ctx, t, &tally)
}

// logKey is what identifies a log record: a resend repeats it.
type logKey struct {
	trace, span, event string
	time               int64
	body               string
}

func keyOf(o store.OpenLog) logKey { // Seq is not part of it: a resend may hold a record elsewhere
	return logKey{o.TraceID, o.SpanID, o.EventName, o.TimeNanos, o.BodyHash}
}

// firstTime is a record's time, else the time it was observed.
func firstTime(lr plog.LogRecord) uint64 {
	if t := uint64(lr.Timestamp()); t != 0 {
		return t
	}
	return uint64(lr.ObservedTimestamp())
}

// bodyHash identifies a record's content: its body and attributes.
func bodyHash(lr plog.LogRecord) string {
	b, _ := json.Marshal([]any{lr.Body().AsRaw(), lr.Attributes().AsRaw()}) // maps encode sorted
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// oneLog encodes a record with its resource and scope as OTLP protobuf, redacted with red.
func oneLog(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, red *redact.Redactor) ([]byte, error) {
	ld := plog.NewLogs()
	out := ld.ResourceLogs().AppendEmpty()
	rl.Resource().CopyTo(out.Resource())
	out.SetSchemaUrl(rl.SchemaUrl())
	ss := out.ScopeLogs().AppendEmpty()
	sl.Scope().CopyTo(ss.Scope())
	ss.SetSchemaUrl(sl.SchemaUrl())
	rec := ss.LogRecords().AppendEmpty()
	lr.CopyTo(rec)
	rec.Attributes().Remove(redactedAttr)
	if red != nil {
		counts := redact.Counts{}
		redactMap(out.Resource().Attributes(), red, counts)
		redactMap(ss.Scope().Attributes(), red, counts)
		redactMap(rec.Attributes(), red, counts)
		redactValue(rec.Body(), red, counts)
		if len(counts) > 0 {
			b, _ := json.Marshal(counts) // a map of ints
			rec.Attributes().PutStr(redactedAttr, string(b))
		}
	}
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return nil, fmt.Errorf("service: encode log record of span %s: %w", lr.SpanID(), err)
	}
	return b, nil
}

// keptLogs decodes the tenant's kept log records, as plog.Logs to join to spans, with
// what redaction replaced in them by trace/span.
func keptLogs(kept []store.OpenLog) (plog.Logs, map[string]redact.Counts, error) {
	ld := plog.NewLogs()
	counts := map[string]redact.Counts{}
	for _, o := range kept {
		if len(o.Record) == 0 {
			continue
		}
		one, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(o.Record)
		if err != nil {
			return ld, nil, fmt.Errorf("service: kept log record of span %s of trace %s does not decode: %w", o.SpanID, o.TraceID, err)
		}
		for _, rl := range one.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					v, ok := lr.Attributes().Get(redactedAttr)
					if !ok {
						continue
					}
					var c redact.Counts
					_ = json.Unmarshal([]byte(v.Str()), &c) // written by oneLog
					k := o.TraceID + "/" + o.SpanID
					if counts[k] == nil {
						counts[k] = redact.Counts{}
					}
					for kind, n := range c {
						counts[k][kind] += n
					}
					lr.Attributes().Remove(redactedAttr)
				}
			}
		}
		one.ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	}
	return ld, counts, nil
}
