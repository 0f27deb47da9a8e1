package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/internal/service"
)

// Problem is an error answer: RFC 9457 problem details (application/problem+json) with a
// stable machine-readable code. Clients branch on code, never on detail.
type Problem struct {
	// Title is the HTTP status text.
	Title string `json:"title" example:"Bad Request"`
	// Status is the HTTP status.
	Status int `json:"status" example:"400"`
	// Detail says what is wrong and, where it can, how to fix it.
	Detail string `json:"detail,omitempty" example:"limit 0: want 1 to 10000 runs"`
	// Code is stable: invalid_request, invalid_run, invalid_config, unauthorized,
	// insufficient_scope, not_found, unavailable, unknown_scorer, scorer_not_allowed,
	// scorer_refused, agreement_gate, exists, body_too_large, rate_limited, overloaded, internal.
	Code string `json:"code" example:"invalid_request"`
	// Errors lists the places in the request that are wrong, when there are several.
	Errors  []*huma.ErrorDetail `json:"errors,omitempty"`
	headers http.Header
}

// Problem codes.
const (
	CodeInvalidRequest = "invalid_request"
	CodeInvalidRun     = "invalid_run"
	CodeInvalidConfig  = "invalid_config"
	CodeUnauthorized   = "unauthorized"
	// CodeInsufficientScope: the key is valid but its scope does not allow the operation;
	// the detail names the scope needed.
	CodeInsufficientScope = "insufficient_scope"
	CodeNotFound          = "not_found"
	CodeUnknownScorer     = "unknown_scorer"
	CodeScorerNotAllowed  = "scorer_not_allowed"
	// CodeScorerRefused: a scorer could not be published as asked (422); the detail says
	// what is wrong and how to fix it.
	CodeScorerRefused = "scorer_refused"
	// CodeAgreementGate: the tenant's agreement gate refused a promotion (409); the
	// detail gives both versions' agreement with the labels and how to override.
	CodeAgreementGate = "agreement_gate"
	CodeExists        = "exists"
	CodeBodyTooLarge  = "body_too_large"
	CodeRateLimited   = "rate_limited"
	CodeOverloaded    = "overloaded"
	CodeInternal      = "internal"
	// CodeUnavailable: the service is not set up for the request; the detail says what
	// the operator must do.
	CodeUnavailable = "unavailable"
)

func (p *Problem) Error() string             { return p.Detail }
func (p *Problem) GetStatus() int            { return p.Status }
func (p *Problem) ContentType(string) string { return "application/problem+json" }
func (p *Problem) GetHeaders() http.Header   { return p.headers }

// problem returns a Problem for status with code and detail.
func problem(status int, code, detail string) *Problem {
	return &Problem{Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

// codeOf is the code of huma's own errors (validation, size, routing), by status.
func codeOf(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusRequestEntityTooLarge:
		return CodeBodyTooLarge
	case http.StatusTooManyRequests:
		return CodeRateLimited
	case http.StatusServiceUnavailable:
		return CodeOverloaded
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeInvalidRequest
}

// newProblem replaces huma's error model: every error the API writes, its own included,
// is a Problem. Huma's validation answers 422; a request the contract rejects is a 400
// here like every other bad request, so clients handle one status.
func newProblem(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	if status == http.StatusUnprocessableEntity {
		status = http.StatusBadRequest
	}
	p := problem(status, codeOf(status), msg)
	for _, e := range errs {
		if e == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(e, &d) {
			p.Errors = append(p.Errors, d.ErrorDetail())
		} else {
			p.Errors = append(p.Errors, &huma.ErrorDetail{Message: e.Error()})
		}
	}
	switch {
	case status == http.StatusRequestEntityTooLarge && ctx != nil && ctx.Operation() != nil:
		p.Detail = fmt.Sprintf("the request body is over the limit of %d bytes; send fewer runs per request", ctx.Operation().MaxBodyBytes)
	case status == http.StatusUnsupportedMediaType:
		p.Detail = "send the body as application/json (POST /v1/runs also takes application/x-ndjson)"
		if len(p.Errors) > 0 {
			p.Detail = p.Errors[0].Message + "; " + p.Detail
		}
	case msg == "request body is required":
		p.Detail = "the request body is empty; send a JSON document (POST /v1/runs takes one run, a JSON array of runs, or JSONL)"
	case status == http.StatusBadRequest && len(p.Errors) == 1 && p.Errors[0].Location == "body" && !strings.Contains(p.Errors[0].Message, "Go struct"):
		p.Detail = "the request body is not valid JSON: " + cleanJSONError(p.Errors[0].Message)
	case status == http.StatusBadRequest && len(p.Errors) > 0:
		// "validation failed" says nothing: name the first problem and where it is.
		first := p.Errors[0]
		first.Message = cleanJSONError(first.Message)
		p.Detail = first.Message
		if first.Location != "" {
			p.Detail = strings.TrimPrefix(first.Location, "body.") + ": " + first.Message
		}
		if len(p.Errors) > 1 {
			p.Detail += fmt.Sprintf(" (and %d more)", len(p.Errors)-1)
		}
		if first.Location == "body.run" || strings.HasPrefix(first.Location, "body.run.") || strings.HasPrefix(first.Location, "body.run[") {
			p.Code = CodeInvalidRun
		}
	case strings.HasPrefix(msg, "unable to unmarshal") || strings.HasPrefix(msg, "invalid character"):
		p.Detail = "the request body is not valid JSON: " + cleanJSONError(msg)
	}
	return p
}

// goField matches encoding/json's type errors, which name Go types.
var goField = regexp.MustCompile(`cannot unmarshal (\w+)(?: "[^"]*")? into Go (?:struct field|value)(?: [\w.]*?\.?([\w.]*))? of type (\S+)`)

// cleanJSONError drops Go's wording from encoding/json messages.
func cleanJSONError(msg string) string {
	msg = strings.TrimPrefix(msg, "unable to unmarshal JSON: ")
	msg = strings.TrimPrefix(msg, "json: ")
	if m := goField.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s: want %s, got %s", strings.TrimPrefix(m[2], "."), jsonType(m[3]), m[1])
	}
	return msg
}

// jsonType names a Go type as JSON calls it.
func jsonType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"):
		return "an object"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.Contains(goType, "int"):
		return "a whole number"
	case strings.Contains(goType, "float"):
		return "a number"
	}
	return "another type"
}

// fromService maps a service error to a Problem; anything unexpected is a 500 whose
// detail hides internals (the server logs them).
func fromService(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var busy *service.BusyError
	if errors.As(err, &busy) {
		p := problem(http.StatusTooManyRequests, CodeRateLimited, busy.Error())
		p.headers = http.Header{"Retry-After": {strconv.Itoa(int(math.Ceil(busy.RetryAfter.Seconds())))}}
		return p
	}
	switch {
	case errors.Is(err, service.ErrUnauthorized):
		return problem(http.StatusUnauthorized, CodeUnauthorized, err.Error())
	case errors.Is(err, service.ErrUnknownScorer):
		return problem(http.StatusNotFound, CodeUnknownScorer, err.Error())
	case errors.Is(err, service.ErrNotFound):
		return problem(http.StatusNotFound, CodeNotFound, err.Error())
	case errors.Is(err, service.ErrInsufficientScope):
		return problem(http.StatusForbidden, CodeInsufficientScope, err.Error())
	case errors.Is(err, service.ErrNotAllowed):
		return problem(http.StatusForbidden, CodeScorerNotAllowed, err.Error())
	case errors.Is(err, service.ErrInvalidConfig):
		return problem(http.StatusBadRequest, CodeInvalidConfig, err.Error())
	case errors.Is(err, service.ErrInvalid):
		return problem(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	case errors.Is(err, service.ErrExists):
		return problem(http.StatusConflict, CodeExists, err.Error())
	case errors.Is(err, service.ErrGate):
		return problem(http.StatusConflict, CodeAgreementGate, err.Error())
	case errors.Is(err, service.ErrRefused):
		return problem(http.StatusUnprocessableEntity, CodeScorerRefused, err.Error())
	case errors.Is(err, service.ErrTooLarge):
		return problem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, err.Error())
	case errors.Is(err, service.ErrUnavailable):
		return problem(http.StatusServiceUnavailable, CodeUnavailable, err.Error())
	}
	return nil
}
