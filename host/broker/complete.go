package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

func (b *Broker) complete(ctx context.Context, t *tenant, s sinks, c *call, route Route, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	if err := b.checkBatch(ctx, t, c, len(reqs), "requests"); err != nil {
		return nil, err
	}
	d, err := b.dest(t.name, route)
	if err != nil {
		return nil, err
	}
	out := make([]sdk.CompletionResponse, len(reqs))
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i, r := range reqs {
		if err := b.admit(d, r); err != nil {
			out[i] = failed(err)
			continue
		}
		req := b.chatRequest(d, r)
		ep := d.key(req.Model)
		base := chatKey(t.name, &ep, &req, 0)
		key := base
		if n := seen[base]; n > 0 {
			key = chatKey(t.name, &ep, &req, n)
		}
		seen[base]++
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = b.one(ctx, t, s, c, d, r, req, key)
		}()
	}
	wg.Wait()
	for i := range out {
		// Answers from the cache too: one kept before the key was scrubbed from answers.
		b.scrubResponse(&out[i])
	}
	if ctx.Err() != nil {
		return out, ctxErr(ctx)
	}
	return out, nil
}

// one answers one request: from the cache, from an identical request in flight, or from
// the endpoint.
func (b *Broker) one(ctx context.Context, t *tenant, s sinks, c *call, d *dest, r sdk.CompletionRequest, req openai.ChatCompletionRequest, key string) sdk.CompletionResponse {
	if e, ok := b.cache.get(key); ok {
		s.hit(1)
		return sdk.CompletionResponse{Content: e.Content, FinishReason: e.FinishReason, Cached: true}
	}
	b.mu.Lock()
	if f, ok := b.flights[key]; ok {
		b.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return failed(ctxErr(ctx))
		}
		if e := f.resp.Error; e != nil {
			if e.Code == sdk.CodeCanceled || e.Code == sdk.CodeTimeout {
				// The first caller gave up on its own deadline; this one may have time.
				return b.one(ctx, t, s, c, d, r, req, key)
			}
			return f.resp
		}
		s.hit(1)
		return sdk.CompletionResponse{Content: f.resp.Content, FinishReason: f.resp.FinishReason, Cached: true}
	}
	f := &flight{done: make(chan struct{})}
	b.flights[key] = f
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.flights, key)
		b.mu.Unlock()
		close(f.done)
	}()

	est := estimate(r)
	var resp openai.ChatCompletionResponse
	err := b.do(ctx, t, s, c, d, est, func(actx context.Context) (int64, int64, http.Header, error) {
		var err error
		resp, err = b.createChat(actx, d, req)
		if err != nil {
			return 0, 0, resp.Header(), err
		}
		return int64(resp.Usage.PromptTokens), int64(resp.Usage.CompletionTokens), nil, nil
	})
	if err != nil {
		f.resp = failed(err)
		return f.resp
	}
	if len(resp.Choices) == 0 {
		f.resp = failed(&sdk.Error{Code: sdk.CodeJudgeError, Message: "judge: the endpoint returned no choices"})
		return f.resp
	}
	choice := resp.Choices[0]
	f.resp = sdk.CompletionResponse{
		Content:          choice.Message.Content,
		FinishReason:     string(choice.FinishReason),
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}
	// Before the cache and the requests waiting on this one see it.
	b.scrubResponse(&f.resp)
	if cacheable(r, f.resp) {
		e := entry{Content: f.resp.Content, FinishReason: f.resp.FinishReason}
		if c != nil {
			c.hold(key, e)
		} else {
			b.store(key, e)
		}
	}
	return f.resp
}

// admit refuses, before anything is sent, a request the host does not serve: a model the
// operator did not allow on the request's endpoint, or a schema that is not a JSON object.
func (b *Broker) admit(d *dest, r sdk.CompletionRequest) error {
	if m := r.Model; m != "" && !d.t.allows(m) {
		where := "this host"
		if d.t.ep.Name != DefaultEndpoint {
			where = fmt.Sprintf("endpoint %q", d.t.ep.Name)
		}
		return &sdk.Error{Code: sdk.CodeInvalidConfig, Message: fmt.Sprintf(
			"judge: model %q is not allowed on %s (allowed: %s); use one of those, or ask the operator to allow it (the judge broker's Models)",
			m, where, strings.Join(d.t.models(), ", "))}
	}
	if len(r.Schema) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r.Schema, &obj); err != nil {
			return &sdk.Error{Code: sdk.CodeJudgeError, Message: "judge: the request's schema is not a JSON object: " + err.Error()}
		}
	}
	return nil
}

// createChat sends req. A request for structured output (json_schema) to an endpoint that
// refuses it is sent again at once asking for a JSON object, in the same attempt; when the
// endpoint says it does not take json_schema at all, later requests for that model ask
// for a JSON object from the start.
func (b *Broker) createChat(ctx context.Context, d *dest, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	schema := req.ResponseFormat != nil && req.ResponseFormat.Type == openai.ChatCompletionResponseFormatTypeJSONSchema
	noSchemaKey := d.t.ep.Name + "\x00" + req.Model
	if schema {
		b.mu.Lock()
		refused := b.noSchema[noSchemaKey]
		b.mu.Unlock()
		if refused {
			return d.client.CreateChatCompletion(ctx, jsonObject(req))
		}
	}
	resp, err := d.client.CreateChatCompletion(ctx, req)
	if err == nil || !schema {
		return resp, err
	}
	refusal, always := schemaRefusal(err)
	if !refusal {
		return resp, err
	}
	if always {
		b.mu.Lock()
		first := !b.noSchema[noSchemaKey]
		b.noSchema[noSchemaKey] = true
		b.mu.Unlock()
		if first {
			b.log.Info("judge endpoint does not take structured output (response_format json_schema); asking for a JSON object instead",
				"endpoint", d.t.ep.Name, "url", d.t.ep.BaseURL, "model", req.Model, "answer", b.scrubText(textkit.Clip(err.Error(), 200)))
		}
	}
	return d.client.CreateChatCompletion(ctx, jsonObject(req))
}

// jsonObject is req asking for a JSON object instead of structured output.
func jsonObject(req openai.ChatCompletionRequest) openai.ChatCompletionRequest {
	req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	return req
}

// schemaRefusal reports whether err is an endpoint refusing a request's response_format
// json_schema (HTTP 400 or 422 naming it), and whether it said it does not take
// json_schema at all (rather than refusing this one schema).
func schemaRefusal(err error) (refusal, always bool) {
	var status int
	var text string
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status, text = apiErr.HTTPStatusCode, apiErr.Message
		if apiErr.Param != nil {
			text += " " + *apiErr.Param
		}
	case errors.As(err, &reqErr):
		status, text = reqErr.HTTPStatusCode, string(reqErr.Body)
	default:
		return false, false
	}
	text = strings.ToLower(text)
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity ||
		!strings.Contains(text, "response_format") && !strings.Contains(text, "json_schema") {
		return false, false
	}
	for _, w := range []string{"not supported", "unsupported", "not support", "unknown", "unrecognized", "not implemented", "must be one of", "should be one of"} {
		if strings.Contains(text, w) {
			return true, true
		}
	}
	return true, false
}

// cacheable reports whether an answer may be kept. A truncated answer is not: the next run
// should get a chance at a whole one. Nor is an answer to a request for JSON that holds no
// JSON object sdk/verdict can extract: a rerun against a healthy judge must ask again,
// not fail again from the cache. (A Meter also holds what passes here until the scoring
// call's result shows the scorer could use it; see [Meter.Finish].)
//
// Nor is an answer holding text no database stores (a NUL or invalid UTF-8, in the answer
// or in the JSON it holds): the service stores the result with U+FFFD in its place and
// flagged, and a cached answer would bring the same repair back on every rerun.
func cacheable(r sdk.CompletionRequest, resp sdk.CompletionResponse) bool {
	if resp.FinishReason == string(openai.FinishReasonLength) || !storable(resp.Content) {
		return false
	}
	if r.JSON || len(r.Schema) > 0 {
		var v any
		return verdict.Extract(resp.Content, &v) == nil && storableValue(v)
	}
	return true
}

// storable reports whether s holds only text every store keeps as it is.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// storableValue is storable for every string (and key) in a decoded JSON value.
func storableValue(v any) bool {
	switch v := v.(type) {
	case string:
		return storable(v)
	case []any:
		for _, e := range v {
			if !storableValue(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if !storable(k) || !storableValue(e) {
				return false
			}
		}
	}
	return true
}

// chatRequest translates r for go-openai.
func (b *Broker) chatRequest(d *dest, r sdk.CompletionRequest) openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	model := d.model
	if r.Model != "" {
		model = r.Model // admitted by admit
	}
	req := openai.ChatCompletionRequest{Model: model, Messages: msgs, MaxTokens: r.MaxTokens}
	if req.MaxTokens == 0 {
		req.MaxTokens = b.cfg.MaxTokens
	}
	// go-openai drops a zero temperature (omitempty) and the endpoint then samples at
	// its default of 1; the smallest float32 is sent instead and means 0.
	req.Temperature = float32(r.Temperature)
	if r.Temperature == 0 {
		req.Temperature = math.SmallestNonzeroFloat32
	}
	switch {
	case len(r.Schema) > 0:
		// The cache key is this request as asked: whether the endpoint turned out to take
		// json_schema does not change which answer it addresses.
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "answer", Schema: r.Schema, Strict: true},
		}
	case r.JSON:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	if openai.NewReasoningValidator().Validate(req) != nil {
		// Reasoning models take max_completion_tokens and a fixed temperature.
		req.MaxCompletionTokens, req.MaxTokens, req.Temperature = req.MaxTokens, 0, 0
	}
	return req
}

// estimate guesses a request's prompt tokens (about four bytes a token) to reserve them
// against the budget before the endpoint reports the real figure.
func estimate(r sdk.CompletionRequest) int64 {
	n := 0
	for _, m := range r.Messages {
		n += len(m.Content)
	}
	return int64(n/4 + 1)
}

func failed(err error) sdk.CompletionResponse {
	var e *sdk.Error
	if !errors.As(err, &e) {
		e = &sdk.Error{Code: sdk.CodeJudgeError, Message: err.Error()}
	}
	return sdk.CompletionResponse{Error: e}
}
