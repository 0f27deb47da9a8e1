package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Settings a [PreflightError] blames: the one to fix.
const (
	SettingURL   = "url"
	SettingModel = "model"
	SettingKey   = "key"
)

// PreflightError says which setting made the preflight fail and what the endpoint said.
type PreflightError struct {
	// Setting is SettingURL, SettingModel or SettingKey.
	Setting string
	// Message says what happened and what to check, for people.
	Message string
}

func (e *PreflightError) Error() string { return "judge preflight: " + e.Message }

// Unwrap makes errors.Is(err, ErrPreflight) true.
func (e *PreflightError) Unwrap() error { return ErrPreflight }

// preflightTimeout bounds each preflight request, within the caller's deadline.
const preflightTimeout = 15 * time.Second

// Preflight proves, before anything is scored, that the endpoint answers at BaseURL, knows
// Model and accepts the key, and otherwise returns a *PreflightError naming the setting to
// fix. It asks the endpoint's models list first (GET /models: free, and where the model is
// listed, proof of all three); where there is no list (some local servers, Azure, whose
// deployments a list does not show), or the model is not on it (Ollama lists "llama3:latest"
// for "llama3"), it sends one chat completion capped at 1 token. Neither is cached or
// counted against a tenant. A 5xx or 429 is retried once after a short wait; a 429 that
// persists passes (the endpoint is there and knows the key, it is only busy), except
// OpenAI's insufficient_quota, which no wait cures. What the endpoint said is quoted
// with every key the broker holds scrubbed from it.
func (b *Broker) Preflight(ctx context.Context) error {
	err := b.preflight(ctx)
	var pe *PreflightError
	if errors.As(err, &pe) {
		pe.Message = b.scrubText(pe.Message)
	}
	return err
}

func (b *Broker) preflight(ctx context.Context) error {
	urlProven := false
	var listed []string
	if b.cfg.APIType == APIOpenAI {
		lctx, cancel := context.WithTimeout(ctx, min(preflightTimeout, b.cfg.RequestTimeout))
		var seen attempt
		models, err := b.client.ListModels(withAttempt(lctx, &seen))
		cancel()
		switch status := statusOf(err, &seen); {
		case err == nil:
			for _, m := range models.Models {
				listed = append(listed, m.ID)
			}
			if slices.Contains(listed, b.cfg.Model) {
				return nil
			}
			urlProven = true
		case ctx.Err() != nil:
			return ctx.Err()
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return b.keyError("GET /models", err)
		case status == 0 && !errors.Is(err, ErrResponseTooLarge):
			// No answer at all: nothing else will get one either.
			return &PreflightError{SettingURL, fmt.Sprintf("cannot reach the judge at %s: %v; check the URL (and that the server is running)", b.cfg.BaseURL, unwrapURL(err))}
		}
		// A 404 here is an endpoint without a models list (or a wrong path, which the
		// completion below tells apart); anything else, the completion decides.
	}
	return b.preflightCompletion(ctx, urlProven, listed)
}

// preflightCompletion sends a 1-token completion and reads its failure.
func (b *Broker) preflightCompletion(ctx context.Context, urlProven bool, listed []string) error {
	main := &dest{t: b.targets[DefaultEndpoint], client: b.client, model: b.cfg.Model}
	req := b.chatRequest(main, sdk.CompletionRequest{MaxTokens: 1, Messages: []sdk.Message{{Role: "user", Content: "Reply with the word OK."}}})
	for try := 0; ; try++ {
		cctx, cancel := context.WithTimeout(ctx, min(preflightTimeout, b.cfg.RequestTimeout))
		var seen attempt
		resp, err := b.client.CreateChatCompletion(withAttempt(cctx, &seen), req)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		status := statusOf(err, &seen)
		var apiErr *openai.APIError
		isAPI := errors.As(err, &apiErr)
		switch {
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return b.keyError("POST /chat/completions", err)
		case status == http.StatusTooManyRequests && isAPI && fmt.Sprint(apiErr.Code) == "insufficient_quota":
			return &PreflightError{SettingKey, fmt.Sprintf("the endpoint accepts the key but its account has no quota left (%s); add credit or use another key", apiErr.Message)}
		case status == http.StatusTooManyRequests || status >= 500:
			if try == 0 {
				wait := min(max(retryAfter(resp.Header()), b.cfg.BackoffBase), 5*time.Second)
				if err := b.sleep(ctx, wait); err != nil {
					return ctx.Err()
				}
				continue
			}
			if status == http.StatusTooManyRequests {
				b.log.Warn("judge preflight: the endpoint is rate limiting; going on", "url", b.cfg.BaseURL)
				return nil
			}
			return &PreflightError{SettingURL, fmt.Sprintf("the judge at %s answered HTTP %d twice (%v); it may be down: try again later, or check the URL", b.cfg.BaseURL, status, unwrapURL(err))}
		case status == http.StatusNotFound || status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
			msg := errText(err)
			if urlProven || mentionsModel(msg, b.cfg.Model) {
				return b.modelError(msg, listed)
			}
			if status == http.StatusNotFound {
				return &PreflightError{SettingURL, fmt.Sprintf("POST %s/chat/completions answered HTTP 404 (%s); check the URL: an OpenAI-compatible base URL usually ends in /v1", strings.TrimRight(b.cfg.BaseURL, "/"), msg)}
			}
			return &PreflightError{SettingModel, fmt.Sprintf("the endpoint refused a 1-token completion for model %q with HTTP %d (%s); check the model", b.cfg.Model, status, msg)}
		case status == 0 && !errors.Is(err, ErrResponseTooLarge):
			return &PreflightError{SettingURL, fmt.Sprintf("cannot reach the judge at %s: %v; check the URL (and that the server is running)", b.cfg.BaseURL, unwrapURL(err))}
		default:
			_, _, msg := classify(err, nil, &seen)
			return &PreflightError{SettingURL, fmt.Sprintf("the judge at %s did not answer a 1-token completion as an OpenAI-compatible API would: %s", b.cfg.BaseURL, msg)}
		}
	}
}

func (b *Broker) keyError(where string, err error) error {
	what := "no API key was sent"
	if b.cfg.APIKey != "" {
		what = "the API key was refused"
	}
	return &PreflightError{SettingKey, fmt.Sprintf("%s: %s answered %s; check the key (and the organization, if set)", what, where, errText(err))}
}

func (b *Broker) modelError(msg string, listed []string) error {
	hint := ""
	if len(listed) > 0 {
		shown := listed
		if len(shown) > 10 {
			shown = shown[:10]
		}
		hint = fmt.Sprintf("; the endpoint lists %s", strings.Join(shown, ", "))
		if len(listed) > len(shown) {
			hint += fmt.Sprintf(" and %d more", len(listed)-len(shown))
		}
	}
	where := "model"
	if b.cfg.APIType != APIOpenAI {
		where = "model (its Azure deployment, and the API version)"
	}
	return &PreflightError{SettingModel, fmt.Sprintf("the endpoint does not serve model %q (%s); check the %s%s", b.cfg.Model, msg, where, hint)}
}

// statusOf returns the HTTP status of a failed request: from go-openai's error, else the
// one the transport saw, else 0 (no answer).
func statusOf(err error, a *attempt) int {
	if err == nil {
		return 0
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode
	}
	return a.status
}

// errText is what the endpoint said, without go-openai's wrapping.
func errText(err error) string {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return fmt.Sprintf("HTTP %d: %s", apiErr.HTTPStatusCode, apiErr.Message)
	case errors.As(err, &reqErr):
		return fmt.Sprintf("HTTP %d: %s", reqErr.HTTPStatusCode, textkit.Clip(strings.TrimSpace(string(reqErr.Body)), 200))
	}
	return err.Error()
}

// unwrapURL drops the `Post "URL": ` prefix net/http puts on transport errors; the
// message names the URL already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func mentionsModel(msg, model string) bool {
	low := strings.ToLower(msg)
	return strings.Contains(low, "model") || strings.Contains(low, "deployment") || strings.Contains(msg, model)
}
