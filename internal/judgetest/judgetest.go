// Package judgetest is an OpenAI-compatible HTTP server for tests and benchmarks: it
// answers chat completions from scripted rules matched on the prompt, injects faults (an
// HTTP status such as 429 with Retry-After or 500, slow answers, truncated or prose
// answers, a 200 whose body is not a completion, an answer of any size), and answers
// embeddings with deterministic vectors. It can require an API key ([Server.RequireKey])
// and serve a models list ([Server.ListModels]), so that a client's setup checks meet the
// errors a real endpoint gives.
//
// It serves POST /chat/completions and /embeddings, also under /v1/, and GET /models once
// a models list is set. It takes structured output (response_format json_schema) unless
// told to refuse it ([Server.RefuseSchema]), as endpoints without it do; it never
// enforces a schema, so the scripted reply is what the client gets. Token usage is the number of words, so figures are deterministic.
package judgetest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Dimensions is the length of every embedding the server returns.
const Dimensions = 256

// Rule scripts the answer to the chat completions whose last user message contains Match.
type Rule struct {
	// Match is a substring of the last user message; "" matches every request.
	Match string
	// Reply is the assistant content to return.
	Reply string
	// Status, when non-zero, answers with this HTTP status and an OpenAI error body
	// instead (500, 429 ...).
	Status int
	// RetryAfter is the Retry-After header value sent with Status (e.g. "1" or "0.05").
	RetryAfter string
	// Code is the error code sent with Status (e.g. "insufficient_quota"). Optional.
	// Default is the status as a number.
	Code string
	// Delay is how long to wait before answering; the wait ends early when the client
	// goes away.
	Delay time.Duration
	// Times is how many requests this rule answers; 0 is unlimited.
	Times int
	// FinishReason is the finish_reason to return. Default is "stop"; "length" simulates
	// truncation (give a Reply that stops mid-object).
	FinishReason string
	// Embeddings, when true, makes the rule apply to /embeddings requests instead of chat
	// completions: Match is then a substring of any input text, and Reply is ignored
	// (the vectors are always computed). Use it to inject faults into embeddings.
	Embeddings bool
	// Raw, when set, is sent verbatim as the body of an HTTP 200 instead of a completion
	// (an HTML page, a truncated object, prose): what a proxy or a wrong URL answers.
	Raw string
	// EchoAuth makes the answer repeat the request's Authorization header (Azure's api-key
	// when there is none), as a careless proxy or a judge that repeats what it got may: a
	// Status answer's error message ends with it, and every [EchoPlaceholder] in Reply is
	// replaced by it. A client must not pass it on. Optional.
	EchoAuth bool
	// Size, when > 0, answers a well-formed completion whose content is Size bytes of 'x',
	// streamed in chunks without a Content-Length, so the server never holds it in memory.
	// [Server.BytesWritten] tells how much of it the client took.
	Size int64
}

// EchoPlaceholder is where a Reply of a rule with EchoAuth gets the request's
// Authorization header.
const EchoPlaceholder = "{authorization}"

// Request is one request the server received.
type Request struct {
	// Path is the URL path (/v1/chat/completions, /v1/embeddings ...).
	Path string
	// Model is the requested model.
	Model string
	// Messages of a chat completion.
	Messages []sdk.Message
	// Temperature and MaxTokens as sent (MaxTokens is max_tokens or
	// max_completion_tokens).
	Temperature float64
	MaxTokens   int
	// JSON is true when the request asked for response_format json_object.
	JSON bool
	// Schema is the schema of a request for structured output (response_format
	// json_schema), and Strict its strict flag.
	Schema json.RawMessage
	Strict bool
	// Input texts of an embeddings request.
	Input []string
	// Authorization and Organization are the request's auth headers.
	Authorization string
	Organization  string
}

// LastUser returns the content of the request's last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Server is a running test server. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	rules    []Rule
	left     []int // requests each rule may still answer; -1 is unlimited
	requests []Request
	inFlight int
	maxIn    int
	key      string   // required API key; "" accepts any
	models   []string // the models list; nil means the endpoint has none
	written  int64    // bytes of Size answers the client took
	noSchema bool     // refuse response_format json_schema, as endpoints without structured output do
}

// New starts a server that answers from rules: the first matching rule with Times left
// wins. A chat request that no rule matches gets HTTP 400 naming the prompt. Close it when
// done.
func New(rules ...Rule) *Server {
	s := &Server{rules: rules, left: make([]int, len(rules))}
	for i, r := range rules {
		s.left[i] = r.Times
		if r.Times == 0 {
			s.left[i] = -1
		}
	}
	mux := http.NewServeMux()
	chat, embeddings := endpoint(s, s.chat), endpoint(s, s.embeddings)
	for _, prefix := range []string{"", "/v1"} {
		mux.HandleFunc("GET "+prefix+"/models", s.listModels)
		mux.HandleFunc("POST "+prefix+"/chat/completions", chat)
		mux.HandleFunc("POST "+prefix+"/embeddings", embeddings)
		// Azure routes: /openai/deployments/{deployment}/chat/completions.
		mux.HandleFunc("POST "+prefix+"/openai/deployments/{deployment}/chat/completions", chat)
		mux.HandleFunc("POST "+prefix+"/openai/deployments/{deployment}/embeddings", embeddings)
	}
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL to give a client: the server's address plus /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// RootURL is the server's address without /v1 (for Azure-style clients).
func (s *Server) RootURL() string { return s.srv.URL }

// Calls returns how many requests the server has received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Requests returns a copy of the requests received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MaxInFlight returns the largest number of requests the server was answering at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxIn
}

func (s *Server) enter() {
	s.mu.Lock()
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	s.mu.Unlock()
}

func (s *Server) leave() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// RequireKey makes the server answer HTTP 401, as OpenAI does, to every request whose
// Authorization is not "Bearer key" (or whose api-key header is not key, Azure's way).
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// ListModels makes the server list models at GET /models and answer HTTP 404
// (model_not_found, as OpenAI does) to a completion or embeddings request for any other
// model. Without it the server has no models list (GET /models is 404, as on some local
// servers) and accepts every model.
func (s *Server) ListModels(models ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string{}, models...)
}

// RefuseSchema makes the server answer HTTP 400 to every request for structured output
// (response_format json_schema), with OpenAI's error for a model that does not offer it.
// Requests for a JSON object or for text are answered as usual.
func (s *Server) RefuseSchema() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noSchema = true
}

// BytesWritten returns how many bytes of Size answers the server got to write before the
// client stopped reading.
func (s *Server) BytesWritten() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// admit answers 401 for a wrong key and 404 for an unknown model, as OpenAI does; it
// reports whether the request may go on.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, model string) bool {
	s.mu.Lock()
	key, models := s.key, s.models
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key && r.Header.Get("api-key") != key {
		writeErrorCode(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_api_key")
		return false
	}
	if model != "" && models != nil && !slices.Contains(models, model) {
		writeErrorCode(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model), "model_not_found")
		return false
	}
	return true
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.record(r, Request{})
	s.mu.Lock()
	models := s.models
	s.mu.Unlock()
	if models == nil {
		writeError(w, http.StatusNotFound, "judgetest: this endpoint has no models list")
		return
	}
	if !s.admit(w, r, "") {
		return
	}
	data := make([]map[string]any, len(models))
	for i, m := range models {
		data[i] = map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "judgetest"}
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// stream writes a completion whose content is n bytes of 'x', in chunks, and counts what
// the client took.
func (s *Server) stream(w http.ResponseWriter, model string, n int64) {
	w.Header().Set("Content-Type", "application/json")
	head := fmt.Sprintf(`{"id":"judgetest","object":"chat.completion","created":0,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"`, model)
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	chunk := []byte(strings.Repeat("x", 64<<10))
	for left := n; left > 0; {
		c := chunk[:min(int64(len(chunk)), left)]
		k, err := w.Write(c)
		s.mu.Lock()
		s.written += int64(k)
		s.mu.Unlock()
		if err != nil {
			return
		}
		left -= int64(k)
	}
	_, _ = io.WriteString(w, `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
}

type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []sdk.Message `json:"messages"`
	Temperature         float64       `json:"temperature"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type embeddingRequest struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
}

// match returns the first rule matching text with requests left, and spends one.
func (s *Server) match(text string, embeddings bool, inputs []string) (Rule, bool) {
	for i, r := range s.rules {
		if r.Embeddings != embeddings || s.left[i] == 0 {
			continue
		}
		hit := false
		if embeddings {
			hit = r.Match == ""
			for _, in := range inputs {
				hit = hit || strings.Contains(in, r.Match)
			}
		} else {
			hit = strings.Contains(text, r.Match)
		}
		if !hit {
			continue
		}
		if s.left[i] > 0 {
			s.left[i]--
		}
		return r, true
	}
	return Rule{}, false
}

// authorization is the request's key header: Authorization, else Azure's api-key.
func authorization(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		return a
	}
	return r.Header.Get("api-key")
}

func (s *Server) record(r *http.Request, req Request) {
	req.Path = r.URL.Path
	req.Authorization = authorization(r)
	req.Organization = r.Header.Get("OpenAI-Organization")
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
}

// endpoint serves a POST whose JSON body is a T: it counts the request in flight while serve
// answers it, and answers 400 itself when the body does not decode.
func endpoint[T any](s *Server, serve func(http.ResponseWriter, *http.Request, *T)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.enter()
		defer s.leave()
		var in T
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeError(w, http.StatusBadRequest, "judgetest: decode request: "+err.Error())
			return
		}
		serve(w, r, &in)
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, in *chatRequest) {
	req := Request{Model: in.Model, Messages: in.Messages, Temperature: in.Temperature,
		MaxTokens: max(in.MaxTokens, in.MaxCompletionTokens), JSON: in.ResponseFormat != nil && in.ResponseFormat.Type == "json_object"}
	if f := in.ResponseFormat; f != nil && f.Type == "json_schema" && f.JSONSchema != nil {
		req.Schema, req.Strict = f.JSONSchema.Schema, f.JSONSchema.Strict
	}
	s.record(r, req)
	if !s.admit(w, r, req.Model) {
		return
	}
	s.mu.Lock()
	noSchema := s.noSchema
	s.mu.Unlock()
	if noSchema && in.ResponseFormat != nil && in.ResponseFormat.Type == "json_schema" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
			"type":    "invalid_request_error", "param": "response_format", "code": nil,
		}})
		return
	}
	s.mu.Lock()
	rule, ok := s.match(req.LastUser(), false, nil)
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("judgetest: no rule matches the last user message %q", textkit.Clip(req.LastUser(), 200)))
		return
	}
	if injectFault(w, r, rule) {
		return
	}
	if rule.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, rule.Raw)
		return
	}
	if rule.Size > 0 {
		s.stream(w, in.Model, rule.Size)
		return
	}
	finish := rule.FinishReason
	if finish == "" {
		finish = "stop"
	}
	reply := rule.Reply
	if rule.EchoAuth {
		reply = strings.ReplaceAll(reply, EchoPlaceholder, authorization(r))
	}
	prompt := 0
	for _, m := range in.Messages {
		prompt += Words(m.Content)
	}
	completion := Words(reply)
	writeJSON(w, map[string]any{
		"id":      "judgetest",
		"object":  "chat.completion",
		"created": 0,
		"model":   in.Model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": reply},
			"finish_reason": finish,
		}},
		"usage": map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

// injectFault applies rule's delay and scripted status, for either endpoint. It reports
// whether it answered the request (or the client went away), so the caller must stop.
func injectFault(w http.ResponseWriter, r *http.Request, rule Rule) bool {
	if !wait(r, rule.Delay) {
		return true
	}
	if rule.Status == 0 {
		return false
	}
	if rule.RetryAfter != "" {
		w.Header().Set("Retry-After", rule.RetryAfter)
	}
	var code any = rule.Status
	if rule.Code != "" {
		code = rule.Code
	}
	msg := fmt.Sprintf("judgetest: scripted status %d", rule.Status)
	if rule.EchoAuth {
		msg += "; you sent Authorization: " + authorization(r)
	}
	writeErrorCode(w, rule.Status, msg, code)
	return true
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request, in *embeddingRequest) {
	var texts []string
	if err := json.Unmarshal(in.Input, &texts); err != nil {
		var one string
		if err := json.Unmarshal(in.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, "judgetest: input must be a string or a list of strings")
			return
		}
		texts = []string{one}
	}
	s.record(r, Request{Model: in.Model, Input: texts})
	if !s.admit(w, r, in.Model) {
		return
	}
	s.mu.Lock()
	rule, ok := s.match("", true, texts)
	s.mu.Unlock()
	if ok && injectFault(w, r, rule) {
		return
	}
	data := make([]map[string]any, len(texts))
	tokens := 0
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embed(t)}
		tokens += Words(t)
	}
	writeJSON(w, map[string]any{
		"object": "list",
		"model":  in.Model,
		"data":   data,
		"usage":  map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// wait sleeps d or until the client goes away; it reports whether to go on answering.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeErrorCode(w, status, msg, status)
}

// writeErrorCode writes an OpenAI error body; code is a number or a string such as
// "model_not_found".
func writeErrorCode(w http.ResponseWriter, status int, msg string, code any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "judgetest_error", "code": code,
	}})
}

// Words counts the words in s: the server's deterministic token count.
func Words(s string) int { return len(strings.Fields(s)) }

// Embed returns the server's embedding of text: a signed hashed bag of lower-cased words,
// normalized to unit length. Texts that share words have a positive cosine; texts that
// share none are near 0 and may be slightly negative. The zero text gets the zero vector.
func Embed(text string) []float32 {
	v := make([]float64, Dimensions)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%Dimensions] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, Dimensions)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
