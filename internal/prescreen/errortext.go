package prescreen

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// findErrorText finds error messages, stack traces and provider failures in the output.
//
// An answer may quote an error: one that explains an error the user pasted, or a triage of
// an email that reports one. So evidence the input contains too does not count, and where
// the input is about errors, evidence counts only when the output is nothing but the error
// (errorOnly): a traceback, an exception line, a framework stop or a failure notice with no
// prose of its own around it. An input that merely mentions errors ("the app crashes",
// "a 504 from /projects") does not let a leaked traceback through.
func findErrorText(t *screenText) (string, bool) {
	// Whether the input is about errors, and whether the output is only an error, are only
	// worth computing once the output looks like one.
	exempt := func() bool { return mentionsErrors(t.inLow) && !errorOnly(t.out) }
	// Stack traces and panics anywhere in the output.
	if m, ok := stackTraceMarks.find(t.outLow); ok && !quotesInput(t, m) && !exempt() && !shownInSession(t.outLow, m) {
		return "stack trace: " + m, true
	}
	if n := stackFrames(t.out); n >= 2 && !exempt() {
		return strconv.Itoa(n) + " stack frames", true
	}
	first, _, _ := strings.Cut(t.outLow, "\n")
	first = strings.TrimSpace(first)
	if strings.Contains(t.inLow, first) {
		return "", false
	}
	// The output opens like an error message.
	if p, ok := errorOpenings.prefix(first); ok {
		return "starts with " + strconv.Quote(p), true
	}
	// Weaker openings also begin answers about errors ("Error handling in Go ...", "Failed to
	// connect means ..."), so they count only when the input is not about errors.
	if p, ok := weakErrorOpenings.prefix(first); ok && !mentionsErrors(t.inLow) {
		return "starts with " + strconv.Quote(strings.TrimSpace(p)), true
	}
	if name, ok := errorClass(t.out); ok && !strings.Contains(t.inLow, strings.ToLower(name)) && !exempt() {
		return "starts with " + name, true
	}
	if code, ok := httpStatusLine(first); ok && !exempt() {
		return "HTTP " + code, true
	}
	if strings.HasPrefix(first, "<!doctype html") || strings.HasPrefix(first, "<html") {
		if m, ok := containsAnyOf(t.outLow, []string{"error", "bad gateway", "unavailable", "not found", "forbidden", "timeout", "<title>4", "<title>5"}); ok {
			return "an HTML error page (" + m + ")", true
		}
	}
	if k, ok := errorJSON(t.out); ok {
		return "error JSON with key " + strconv.Quote(k), true
	}
	// A short output that is a provider failure or only reports one, unless a tool call of
	// the turn failed: then the answer is relaying that failure to the user, as it should
	// ("I couldn't cancel it: the calendar service is unavailable"), and tool_error judges
	// the turn instead.
	if len(t.out) <= 300 && !t.toolFailed {
		// Phrases a provider error uses and an answer rarely does: "rate limit" or "timeout" alone
		// also describe an API, so they are not here.
		if m, ok := providerFailures.find(t.outLow); ok && !quotesInput(t, m) && !exempt() {
			return "provider failure: " + m, true
		}
		// A sentence that only reports a failure: "Sorry, something went wrong."
		if m, ok := failureNotices.find(t.outLow); ok && !quotesInput(t, m) && !exempt() {
			return "reports a failure: " + strconv.Quote(m), true
		}
		if m, ok := failureReport(t.outLow); ok && !quotesInput(t, m) && !exempt() {
			return "reports a failure: " + strconv.Quote(m), true
		}
		if m, ok := findNotice(t, noticeFailures); ok && !exempt() {
			return "a failure notice: " + strconv.Quote(m), true
		}
	}
	return "", false
}

// shownInSession reports whether the marker m follows an interactive session's prompt
// (">>> divmod(x=3, y=4)" on the line before "Traceback ...") in an output with prose of its
// own: an answer that shows what a call prints, not an error that leaked.
func shownInSession(out, m string) bool {
	i := strings.Index(out, m)
	if i < 0 || errorOnly(out) {
		return false
	}
	before := strings.TrimRight(out[:i], " \t")
	before = strings.TrimSuffix(before, "\n")
	prev := before[strings.LastIndexByte(before, '\n')+1:]
	prev = strings.TrimSpace(prev)
	return strings.HasPrefix(prev, ">>> ") || strings.HasPrefix(prev, "... ") || strings.HasPrefix(prev, "in [")
}

// failureReport finds a short output that reports, in a sentence of its own, that the
// service, the request or the response failed: a failure statement ("something seems to have
// gone wrong", "Remote Server Returned Code 500", "This model is currently experiencing high
// demand", "JacksonBot not responding") that asks the user to come back ("try again", "check
// back", "contact us", a request id), comes with an apology or a first-person "I could not",
// or is the whole output (a dozen words or fewer).
func failureReport(out string) (string, bool) {
	head := out
	if len(head) > 200 {
		head = head[:200]
	}
	m, ok := failureStatements.find(head)
	if !ok {
		return "", false
	}
	if retryDirectives.has(out) || len(strings.Fields(out)) <= 12 || failureVoices.has(head) {
		return m, true
	}
	return "", false
}

// failureVoices are how an assistant reports its own failure: an apology or a first-person
// "I could not" ("I'm sorry, but the knowledge base could not be reached").
var failureVoices = newPhraseSet("sorry", "apolog", "unfortunately", "i was unable", "i wasn't able", "i was not able",
	"i couldn't", "i could not", "i'm unable", "i am unable")

// failureStatements say that a service, a request or a response failed.
var failureStatements = newPhraseSet("went wrong", "gone wrong", "not responding", "isn't responding", "is unavailable",
	"are unavailable", "currently unavailable", "temporarily unavailable", "overloaded", "at capacity", "high demand",
	"capacity constraints", "timed out", "request failed", "request has failed", "response failure", "failed to respond",
	"failed to load", "failed to process", "failed to generate", "returned code 4", "returned code 5", "returned status 4",
	"returned status 5", "error occurred", "error has occurred", "error has occured", "error occured", "encountered an error",
	"encountered a problem", "encountered an issue", "ran into an issue", "ran into a problem", "ran into an error",
	"couldn't process", "could not process", "couldn't complete your", "could not complete your", "unable to complete your",
	"couldn't connect", "could not connect", "unable to connect", "unable to reach", "couldn't reach", "could not reach",
	"can't reach", "cannot reach", "no response from", "having a problem responding", "having trouble responding",
	"error handling the response", "error processing your", "error while processing", "could not be reached",
	"couldn't be reached", "could not be loaded", "couldn't be loaded", "could not be completed", "could not be processed",
	"failed to retrieve", "unable to retrieve", "couldn't retrieve", "could not retrieve", "unable to access the",
	"couldn't access the", "could not access the", "service is down", "is currently down", "tool failed", "tool error")

// retryDirectives send the user back: to retry, to wait, to support.
var retryDirectives = newPhraseSet("try again", "try me again", "again in a", "retry", "check back", "later", "help center", "contact us", "contact support",
	"request id", "persists", "reload", "refresh")

// quotesInput reports whether the output's line that holds the marker m is quoted from the
// input: an answer that repeats the user's own traceback or error line.
func quotesInput(t *screenText, m string) bool {
	i := strings.Index(t.outLow, m)
	if i < 0 || !strings.Contains(t.inLow, m) {
		return false
	}
	start := strings.LastIndexByte(t.outLow[:i], '\n') + 1
	end := strings.IndexByte(t.outLow[i:], '\n')
	if end < 0 {
		end = len(t.outLow) - i
	}
	return strings.Contains(t.inLow, strings.TrimSpace(t.outLow[start:i+end]))
}

// errorOnly reports whether an output is an error and nothing else: every line is part of
// an error (a marker, an exception or error line, a stack frame, an indented line of a
// trace, a detail line such as "File: ..." or "Line: 234", a failure notice that opens its
// line), and the other lines hold fewer than 40 letters ("Your post copy:"). An answer that
// explains an error says so in sentences of its own, which are not error lines.
func errorOnly(out string) bool {
	letters, lines := 0, 0
	for rest := out; rest != "" && lines < 60; lines++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if line == "" || strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' || isErrorLine(strings.TrimSpace(line)) {
			continue
		}
		for _, r := range line {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters >= 40 {
			return false
		}
	}
	return true
}

// isErrorLine reports whether a trimmed line is part of an error message rather than a
// sentence about one: "The traceback ends in a KeyError" is prose, "openai.APITimeoutError:
// Request timed out." and "Post ...: context deadline exceeded" are not.
func isErrorLine(line string) bool {
	bare := strings.TrimLeft(line, "*#>[ ")
	if bare == "" {
		return true
	}
	if _, ok := errorClass(bare); ok || startsWithErrorName(bare) {
		return true
	}
	l, lb := foldLower(line), foldLower(bare)
	if m, ok := stackTraceMarks.find(l); ok && markerLeads(l, m) {
		return true
	}
	for _, x := range [...]string{l, lb} {
		if _, ok := errorOpenings.prefix(x); ok {
			return true
		}
	}
	if _, ok := errorDetails.prefix(lb); ok {
		return true
	}
	if _, ok := httpStatusLine(lb); ok {
		return true
	}
	// A frame: "at pkg.fn(file:12)", "file \"x.py\", line 3", "0: rust_begin_unwind",
	// "main.answer(...)".
	if strings.HasPrefix(lb, "at ") || strings.HasPrefix(lb, "file \"") ||
		lb[0] >= '0' && lb[0] <= '9' && strings.Contains(lb[:min(len(lb), 6)], ":") ||
		strings.HasSuffix(lb, ")") && !strings.Contains(lb, " ") {
		return true
	}
	// A failure notice that opens its line: "Sorry, something went wrong."
	for _, p := range [...]string{"sorry, ", "sorry! ", "oops, ", "oops! ", "oops. ", "we're sorry, ", "we are sorry, ", "unfortunately, "} {
		lb = strings.TrimPrefix(lb, p)
	}
	if _, ok := failureNotices.prefix(lb); ok {
		return true
	}
	_, ok := providerFailures.prefix(lb)
	return ok
}

// markerLeads reports whether the marker m opens its line, or follows what an error line
// puts before it (a colon, a quote, a bracket: "Post \"...\": context deadline exceeded",
// "[...] PHP Fatal error"), or "a"/"an" ("A NoMethodError occurred"); after other words
// it is part of a sentence about the error.
func markerLeads(l, m string) bool {
	if m[0] == '\'' || m[0] == ')' {
		return true // "thread 'main' panicked at": the marker follows the thread's name
	}
	i := strings.Index(l, m)
	before := strings.TrimRight(l[:i], " ")
	if before == "" || before == "a" || before == "an" {
		return true
	}
	switch before[len(before)-1] {
	case ':', '"', '\'', ']', ')', '>', '(':
		return true
	}
	return false
}

// startsWithErrorName reports whether a line opens with an exception's name and a word:
// "System.NullReferenceException was unhandled".
func startsWithErrorName(line string) bool {
	name, _, ok := strings.Cut(line, " ")
	if !ok {
		return false
	}
	for _, suf := range [...]string{"Error", "Exception"} {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) && strings.ToLower(name[:1]) != name[:1] {
			return true
		}
	}
	return false
}

// mentionsErrors reports whether a text is about errors, so an answer may quote them.
func mentionsErrors(s string) bool {
	return errorTopics.has(s)
}

// stackFrames counts lines that look like stack frames: Java/.NET/JS "at pkg.fn(file:line)"
// and Python 'File "x", line n'.
func stackFrames(s string) int {
	n := 0
	forEachLine(s, func(l string) bool {
		switch {
		case strings.HasPrefix(l, "at ") && strings.Contains(l, "(") && strings.ContainsAny(l, ":") && strings.IndexAny(l, "0123456789") > 0:
			n++
		case strings.HasPrefix(l, "at ") && strings.Contains(l, " in ") && strings.Contains(l, ":line "):
			n++
		case strings.HasPrefix(l, "File \"") && strings.Contains(l, "\", line "):
			n++
		}
		return true
	})
	return n
}

// errorClass reports whether s opens with an exception class and a colon, such as
// "TypeError: ..." or "openai.APITimeoutError: ...".
func errorClass(s string) (string, bool) {
	end := strings.IndexAny(s, ": \n({")
	if end <= 0 || end >= len(s) || (s[end] != ':' && s[end] != '(') {
		return "", false
	}
	name := s[:end]
	if strings.ContainsAny(name, " \t") {
		return "", false
	}
	for _, suf := range []string{"Error", "Exception", "Exception>", "Fault"} {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) {
			return name, true
		}
	}
	return "", false
}

// httpStatusLine reports whether line is an HTTP error status: "HTTP/1.1 503 Service
// Unavailable", "404 Not Found", "500 - Internal Server Error".
func httpStatusLine(line string) (string, bool) {
	line = strings.TrimPrefix(line, "http/1.1 ")
	line = strings.TrimPrefix(line, "http/2 ")
	if len(line) < 5 || (line[0] != '4' && line[0] != '5') {
		return "", false
	}
	code := line[:3]
	if _, err := strconv.Atoi(code); err != nil {
		return "", false
	}
	rest := strings.TrimLeft(line[3:], " -:")
	if len(rest) == len(line[3:]) || rest == "" {
		return "", false
	}
	if _, ok := httpReasons.prefix(rest); !ok {
		return "", false
	}
	return code, true
}

// errorJSON reports whether s is a JSON object (or a Python dict repr) whose top level
// carries an error.
func errorJSON(s string) (string, bool) {
	if !strings.HasPrefix(s, "{") {
		// Python SDKs print "Error code: 429 - {'error': ...}"; those start with "error".
		return "", false
	}
	if strings.HasPrefix(s, "{'error'") || strings.HasPrefix(s, "{'type': 'error'") {
		return "error", true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil {
		return "", false
	}
	for _, k := range []string{"error", "errors", "error_message", "errorMessage"} {
		if v, ok := m[k]; ok && string(v) != "null" && string(v) != "[]" && string(v) != "false" {
			return k, true
		}
	}
	if v, ok := m["status"]; ok {
		if n, err := strconv.Atoi(strings.Trim(string(v), `"`)); err == nil && n >= 400 && n < 600 {
			return "status", true
		}
	}
	return "", false
}

// stackTraceMarks are markers of a stack trace or a crash anywhere in an output.
// They cover Python, Java, Go, Rust panics, PHP fatal errors, .NET and Ruby exceptions,
// Go's deadline errors, and the stops of agent frameworks and their output parsers.
var stackTraceMarks = newPhraseSet("traceback (most recent call last)", "exception in thread \"", "goroutine 1 [running]", "[signal sigsegv",
	"' panicked at", ") panicked at", "panicked at '", "note: run with `rust_backtrace=1`", "php fatal error", "fatal error: uncaught",
	"{main} thrown in", "php parse error", "php warning:", "unhandled exception", "was unhandled", "object reference not set to an instance",
	"nomethoderror", "for nil:nilclass", "call to a member function", "context deadline exceeded", "client.timeout exceeded",
	"agent stopped due to", "stopped: maximum iterations", "maximum iterations exceeded", "max iterations reached", "reached max iterations",
	"could not parse llm output", "outputparserexception", "invalid format: missing 'action", "segmentation fault (core dumped)")

// providerFailures are phrases a provider error uses and an answer rarely does.
var providerFailures = newPhraseSet("rate limit reached", "rate limit exceeded", "rate_limit_exceeded", "too many requests",
	"timed out", "upstream request timeout", "service unavailable",
	"bad gateway", "gateway timeout", "internal server error", "overloaded", "insufficient_quota", "quota exceeded",
	"maximum context length", "context_length_exceeded", "connection refused", "connection reset", "status code 4", "status code 5",
	"deadline exceeded", "iteration limit")

// errorTopics are words of a text about errors.
var errorTopics = newPhraseSet("error", "exception", "traceback", "stack", "crash", "fail", "timeout", "timed out", "429", "500", "502", "503", "504", "status", "http", "rate limit", "panic", "bug", "deadline", "iteration", "nil", "null")

// errorOpenings open an error message.
var errorOpenings = newPhraseSet("error:", "error code", "error -", "err:", "fatal:", "fatal error", "exception:", "panic:",
	"request failed", "unhandled exception", "uncaught ", "[error]", "**error**", "thread 'main' panicked")

// weakErrorOpenings open error messages and also answers about errors.
var weakErrorOpenings = newPhraseSet("error ", "internal server error", "failed to ", "unable to connect", "connection error", "timeout:")

// errorDetails open the detail lines of an error report: "File: ...", "Line: 234",
// "Additional information: ...", "Stack trace:".
var errorDetails = newPhraseSet("file:", "line:", "code:", "message:", "details:", "exception details", "additional information:",
	"stack trace:", "stack backtrace:", "backtrace:", "caused by:", "caused by ", "note: ", "thrown in", "request id:", "req id:",
	"trace id:", "status:", "type:", "in ", "during handling of the above exception", "the above exception was the direct cause")

// httpReasons open the reason phrase of an HTTP error status.
var httpReasons = newPhraseSet("bad", "not", "internal", "service", "gateway", "forbidden", "unauthorized", "too many", "request", "error", "conflict", "payload", "unprocessable")
