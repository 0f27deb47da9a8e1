package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
)

// The review walks the runs worth a look for a scorer one at a time and takes a person's
// label with a form: no script, each verdict its own submit button (Pass has the focus
// and an access key, as do Fail and the score), and a POST that must come from this
// origin (Sec-Fetch-Site and Origin, checked by http.CrossOriginProtection for every
// state change) and carry a token tied to the session (an HMAC of the session token
// under a key the handler draws at start, so a page that cannot read the session cannot
// forge it).

// reviewQueueLength bounds the runs a review page counts ahead; maxReviewResults the
// scorer's results on the run it shows, the newest.
const (
	reviewQueueLength = 200
	maxReviewResults  = 20
)

// errForbidden is a refused form post.
var errForbidden = errors.New("forbidden")

// csrfToken is the form token of the request's session; a service that runs open has one
// session, the process's.
func (h *Handler) csrfToken(r *http.Request) string {
	session := "open"
	if !h.opts.Open {
		if c, err := r.Cookie(CookieName); err == nil {
			session = "session:" + c.Value
		}
	}
	m := hmac.New(sha256.New, h.csrfKey[:])
	m.Write([]byte("label\x00" + session))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (h *Handler) checkCSRF(r *http.Request) bool {
	got := r.PostForm.Get("csrf")
	return got != "" && hmac.Equal([]byte(got), []byte(h.csrfToken(r)))
}

type reviewData struct {
	pageData
	Scorer    string
	Criterion string
	Labeller  string
	Skip      int
	Queue     int
	Item      *service.ReviewItem
	Shown     runShown
	Results   []service.ResultView
	// OlderResults counts the scorer's results older than the maxReviewResults shown.
	OlderResults int
	Labels       []service.Label
	// Choices are the rubric's choices of the evaluation of the latest result (Choices
	// From), a submit button each; none for a scorer without choices.
	Choices     []service.Choice
	ChoicesFrom string
	CSRF        string
	// ReadOnly: the session's key may not label (scope read); the form is not shown.
	ReadOnly bool
	// LabellerFixed: the session's key is a label key, whose labeller is Labeller.
	LabellerFixed bool
	Saved         string
	NextSkip      int
	PrevSkip      int
}

// reviewQuery is the review's place: who labels, which labels, how many runs skipped.
func reviewQuery(scorer, criterion, labeller string, skip int) string {
	q := url.Values{}
	q.Set("labeller", labeller)
	if criterion != "" && criterion != scorer {
		q.Set("criterion", criterion)
	}
	if skip > 0 {
		q.Set("skip", strconv.Itoa(skip))
	}
	return "/review/" + url.PathEscape(scorer) + "?" + q.Encode()
}

// review shows the next run worth a look for the scorer (or the run ?run= names), with
// the form that labels it.
func (h *Handler) review(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	q := r.URL.Query()
	d := reviewData{pageData: h.page(t, "Review "+r.PathValue("scorer")), Scorer: r.PathValue("scorer"),
		Criterion: q.Get("criterion"), Labeller: strings.TrimSpace(q.Get("labeller")), Saved: q.Get("saved"), CSRF: h.csrfToken(r), ReadOnly: !canLabel(r)}
	if b := boundLabeller(r); b != "" {
		d.Labeller, d.LabellerFixed = b, true // a label key labels under its own name
	}
	d.Nav = "agreement"
	if d.Criterion == "" {
		d.Criterion = d.Scorer
	}
	d.Skip, _ = strconv.Atoi(q.Get("skip"))
	d.Skip = max(d.Skip, 0)
	if d.Labeller == "" { // who labels comes first: the queue leaves out what they labelled
		h.render(w, r, "review", http.StatusOK, d)
		return
	}
	var item *service.ReviewItem
	if id := q.Get("run"); id != "" {
		item = &service.ReviewItem{RunID: id, Why: "chosen", Detail: "the run you opened"}
	} else {
		queue, err := h.svc.ReviewQueue(r.Context(), t, d.Scorer, d.Criterion, d.Labeller, reviewQueueLength)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		d.Queue = len(queue)
		if d.Skip < len(queue) {
			item = &queue[d.Skip]
		}
	}
	d.NextSkip, d.PrevSkip = d.Skip+1, max(d.Skip-1, 0)
	if item == nil {
		h.render(w, r, "review", http.StatusOK, d)
		return
	}
	v, err := h.svc.Run(r.Context(), t, item.RunID, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d.Item, d.Shown = item, showRun(v.ID, v.Run)
	for _, res := range v.Results {
		if res.Scorer == d.Scorer {
			d.Results = append(d.Results, res)
		}
	}
	if n := len(d.Results); n > maxReviewResults {
		d.Results, d.OlderResults = d.Results[n-maxReviewResults:], n-maxReviewResults
	}
	if d.Labels, err = h.svc.RunLabels(r.Context(), t, item.RunID, d.Criterion); err != nil {
		h.fail(w, r, err)
		return
	}
	if n := len(d.Results); n > 0 && d.Results[n-1].EvaluationID != "" {
		d.ChoicesFrom = d.Results[n-1].EvaluationID
		if d.Choices, err = h.svc.EvaluationChoices(r.Context(), t, d.ChoicesFrom, d.Scorer); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.render(w, r, "review", http.StatusOK, d)
}

// label stores the label the review form posts and goes on to the next run.
func (h *Handler) label(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, &formError{"the form could not be read; label the run again"})
		return
	}
	if !h.checkCSRF(r) {
		h.refuse(w, r, "The form's token does not match your session: reload the review page and label the run again.")
		return
	}
	f := r.PostForm
	scorer, criterion, labeller := r.PathValue("scorer"), f.Get("criterion"), strings.TrimSpace(f.Get("labeller"))
	if b := boundLabeller(r); b != "" && labeller == "" {
		labeller = b
	}
	if criterion == "" {
		criterion = scorer
	}
	in := service.LabelInput{Labeller: labeller, LabelValue: service.LabelValue{Note: strings.TrimSpace(f.Get("note"))}}
	switch v := f.Get("verdict"); {
	case f.Has("choice"):
		// The score is the rubric's, read again from the evaluation, never the form's.
		choice, err := h.choice(r, t, scorer, f.Get("choices_from"), f.Get("choice"))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		in.Choice, in.Score = &choice.Name, &choice.Score
	case v == "pass" || v == "fail":
		passed := v == "pass"
		in.Passed = &passed
	case v == "score":
		s, err := strconv.ParseFloat(strings.TrimSpace(f.Get("score")), 64)
		if err != nil {
			h.fail(w, r, &formError{"score " + strconv.Quote(f.Get("score")) + ": give a number from 0 to 1"})
			return
		}
		in.Score = &s
	default:
		h.fail(w, r, &formError{"verdict " + strconv.Quote(v) + ": press Pass, Fail or Save score"})
		return
	}
	id := r.PathValue("id")
	if _, _, err := h.svc.PutLabel(r.Context(), t, id, criterion, in); err != nil {
		h.fail(w, r, err)
		return
	}
	skip, _ := strconv.Atoi(f.Get("skip"))
	// The labelled run leaves the queue, so the same place shows the next one.
	http.Redirect(w, r, reviewQuery(scorer, criterion, labeller, max(skip, 0))+"&saved="+url.QueryEscape(id), http.StatusSeeOther)
}

// choice finds the choice named in the choices the scorer had in the evaluation.
func (h *Handler) choice(r *http.Request, t store.Tenant, scorer, evaluationID, name string) (service.Choice, error) {
	cs, err := h.svc.EvaluationChoices(r.Context(), t, evaluationID, scorer)
	if err != nil {
		return service.Choice{}, err
	}
	for _, c := range cs {
		if c.Name == name {
			return c, nil
		}
	}
	return service.Choice{}, &formError{"choice " + strconv.Quote(name) + ": not one of the rubric's choices in evaluation " + evaluationID + "; reload the review page"}
}

// formError is a form the dashboard cannot take; it answers 400 with the message.
type formError struct{ msg string }

func (e *formError) Error() string { return e.msg }
func (e *formError) Unwrap() error { return service.ErrInvalid }

// refuse answers 403 with why.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, msg string) {
	t, _ := r.Context().Value(tenantKey{}).(store.Tenant)
	h.render(w, r, "error", http.StatusForbidden, errorData{pageData: h.page(t, "Forbidden"), Status: http.StatusForbidden, Message: msg})
}

type agreementRow struct {
	service.LabelCount
	Agreement *service.ScorerAgreement
	// Versions are the earlier versions' agreement on the same labels, the most recently
	// used first (at most versionsShown in all).
	Versions []service.ScorerAgreement
	Error    string
}

// versionsShown caps the versions of a scorer the agreement page measures.
const versionsShown = 5

type agreementData struct {
	pageData
	Rows    []agreementRow
	Scorers []string
}

// agreement shows, per scorer (or criterion) with labels, its label count beside its
// latest version's agreement with them, and links to review each scorer the tenant runs.
func (h *Handler) agreement(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	counts, err := h.svc.LabelCounts(r.Context(), t)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := agreementData{pageData: h.page(t, "Agreement with labels"), Scorers: h.svc.ScorerNames(t)}
	d.Nav = "agreement"
	for _, c := range counts {
		row := agreementRow{LabelCount: c}
		a, err := h.svc.ScorerAgreement(r.Context(), t, service.AgreementRequest{Scorer: c.Scorer})
		switch {
		case err == nil:
			row.Agreement = &a
			for _, v := range a.Versions[min(1, len(a.Versions)):min(len(a.Versions), versionsShown)] {
				old, err := h.svc.ScorerAgreement(r.Context(), t, service.AgreementRequest{Scorer: c.Scorer, Version: v})
				if err != nil {
					h.fail(w, r, err)
					return
				}
				row.Versions = append(row.Versions, old)
			}
		case errors.Is(err, service.ErrNotFound) || errors.Is(err, service.ErrInvalid):
			row.Error = err.Error()
		default:
			h.fail(w, r, err)
			return
		}
		d.Rows = append(d.Rows, row)
	}
	h.render(w, r, "agreement", http.StatusOK, d)
}

// deref is what a pointer of a label's value points to.
func deref(v any) any {
	switch p := v.(type) {
	case *bool:
		return *p
	case *float64:
		return *p
	case *string:
		return *p
	}
	return v
}

// firstPeople is the pair of labellers with the most runs in common, or nil.
func firstPeople(ps []service.PeopleAgreement) *service.PeopleAgreement {
	if len(ps) == 0 {
		return nil
	}
	return &ps[0]
}
