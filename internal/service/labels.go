package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scorekit/scorekit/internal/service/store"
)

// Limits of a label's text.
const (
	MaxLabelNameBytes = 200
	MaxLabelNoteBytes = 10000
)

// LabelValue is what a person judged: exactly one of Passed, Score and Choice, except
// that a Choice may carry the Score its rubric gives it (so that it can be compared with
// the scorer's scores).
type LabelValue struct {
	// Passed is a pass (true) or fail (false) verdict.
	Passed *bool `json:"passed,omitempty" doc:"Pass (true) or fail (false)."`
	// Score is a score in [0, 1].
	Score *float64 `json:"score,omitempty" minimum:"0" maximum:"1" doc:"A score in [0, 1]; with choice, the score the rubric gives that choice."`
	// Choice is one of a rubric's choices.
	Choice *string `json:"choice,omitempty" doc:"One of a rubric's choices, as the rubric names it."`
	// Note is the labeller's comment. Optional.
	Note string `json:"note,omitempty" maxLength:"10000" doc:"Why, in the labeller's words."`
}

// LabelInput is a label as a client gives it for one run and scorer.
type LabelInput struct {
	// Labeller names the person; several people may label the same run and scorer.
	Labeller string `json:"labeller" minLength:"1" maxLength:"200" doc:"Who labelled the run; a person labelling again replaces their label." example:"ana@example.com"`
	LabelValue
}

// Label is a stored label.
type Label struct {
	RunID  string `json:"run_id"`
	Agent  string `json:"agent"`
	Scorer string `json:"scorer" doc:"The scorer, or the criterion several scorers share, the label judges the run for."`
	LabelInput
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func labelView(l store.Label) Label {
	return Label{RunID: l.RunID, Agent: l.Agent, Scorer: l.Scorer, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
		LabelInput: LabelInput{Labeller: l.Labeller, LabelValue: LabelValue{Passed: l.Passed, Score: l.Score, Choice: l.Choice, Note: l.Note}}}
}

// checkLabelName checks a scorer (criterion) or labeller name.
func checkLabelName(what, v string) error {
	if strings.TrimSpace(v) == "" || len(v) > MaxLabelNameBytes || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n\r") {
		return invalid("%s %q: want 1-%d characters of UTF-8 without NUL or line breaks", what, v, MaxLabelNameBytes)
	}
	return nil
}

// check says what is wrong with a label's value.
func (v LabelValue) check() error {
	n := 0
	for _, set := range []bool{v.Passed != nil, v.Score != nil && v.Choice == nil, v.Choice != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return invalid(`give exactly one of "passed" (true or false), "score" (0 to 1) or "choice" (a rubric's choice, optionally with its "score")`)
	}
	if v.Score != nil && (math.IsNaN(*v.Score) || *v.Score < 0 || *v.Score > 1) {
		return invalid("score %v: want 0 to 1", *v.Score)
	}
	if v.Choice != nil {
		if err := checkLabelName("choice", *v.Choice); err != nil {
			return err
		}
	}
	if len(v.Note) > MaxLabelNoteBytes || !utf8.ValidString(v.Note) {
		return invalid("note: want at most %d bytes of UTF-8", MaxLabelNoteBytes)
	}
	return nil
}

func (in LabelInput) check(scorer string) error {
	if err := checkLabelName("scorer", scorer); err != nil {
		return err
	}
	if err := checkLabelName("labeller", in.Labeller); err != nil {
		return err
	}
	return in.LabelValue.check()
}

// labellerKey carries the labeller a caller is bound to (AsLabeller).
type labellerKey struct{}

// AsLabeller returns ctx for a caller bound to one labeller: a key of scope label (the
// API and the dashboard set it). The labels written or deleted with it must be that
// labeller's.
func AsLabeller(ctx context.Context, labeller string) context.Context {
	return context.WithValue(ctx, labellerKey{}, labeller)
}

// checkLabeller says why a caller bound to a labeller (AsLabeller) may not write or
// delete labeller's labels; nil when it may, or is bound to none.
func checkLabeller(ctx context.Context, labeller string) error {
	bound, _ := ctx.Value(labellerKey{}).(string)
	if bound == "" || labeller == bound {
		return nil
	}
	return &Error{kind: ErrInsufficientScope, msg: fmt.Sprintf(
		"this key writes labels as %q only, and this label is %q's: send labeller %q, or use a key of scope admin", bound, labeller, bound)}
}

// tenantRun finds the tenant's run or says there is none.
func (s *Service) tenantRun(ctx context.Context, t store.Tenant, id string) (store.Run, error) {
	r, err := s.st.Run(ctx, t.ID, id)
	return r, notFound(err, "no run %q", id)
}

// PutLabel records the labeller's judgement of the tenant's run for scorer (a scorer's
// name, or a criterion several scorers share), replacing the one they gave before; created
// is true for a new label. Another tenant's run is ErrNotFound.
func (s *Service) PutLabel(ctx context.Context, t store.Tenant, runID, scorer string, in LabelInput) (l Label, created bool, err error) {
	if err := in.check(scorer); err != nil {
		return Label{}, false, err
	}
	if err := checkLabeller(ctx, in.Labeller); err != nil {
		return Label{}, false, err
	}
	r, err := s.tenantRun(ctx, t, runID)
	if err != nil {
		return Label{}, false, err
	}
	sl, created, err := s.st.PutLabel(ctx, t.ID, newLabel(r.PK, scorer, in))
	if err != nil {
		return Label{}, false, err
	}
	sl.RunID, sl.Agent = r.ID, r.Agent
	return labelView(sl), created, nil
}

func newLabel(runPK int64, scorer string, in LabelInput) store.NewLabel {
	return store.NewLabel{RunPK: runPK, Scorer: scorer, Labeller: in.Labeller, Passed: in.Passed, Score: in.Score, Choice: in.Choice, Note: in.Note}
}

// RunLabels lists the labels of the tenant's run, of one scorer when scorer is not empty,
// in the order they were first given.
func (s *Service) RunLabels(ctx context.Context, t store.Tenant, runID, scorer string) ([]Label, error) {
	r, err := s.tenantRun(ctx, t, runID)
	if err != nil {
		return nil, err
	}
	ls, err := s.st.Labels(ctx, t.ID, store.LabelQuery{RunPK: r.PK, Scorer: scorer})
	if err != nil {
		return nil, err
	}
	out := make([]Label, 0, len(ls))
	for _, l := range ls {
		out = append(out, labelView(l))
	}
	return out, nil
}

// DeleteLabel removes the label the labeller gave the tenant's run for scorer.
func (s *Service) DeleteLabel(ctx context.Context, t store.Tenant, runID, scorer, labeller string) error {
	if err := checkLabelName("labeller", labeller); err != nil {
		return err
	}
	if err := checkLabeller(ctx, labeller); err != nil {
		return err
	}
	r, err := s.tenantRun(ctx, t, runID)
	if err != nil {
		return err
	}
	err = s.st.DeleteLabel(ctx, t.ID, r.PK, scorer, labeller)
	return notFound(err, "run %q has no label of %q for %q", runID, labeller, scorer)
}

// LabelQuery selects a page of the tenant's labels.
type LabelQuery struct {
	// Scorer keeps one scorer's (or criterion's) labels. Optional.
	Scorer string
	// Labeller keeps one person's labels. Optional.
	Labeller string
	// Limit is the page size, 1 to MaxPage.
	Limit int
	// Cursor is the previous page's Next. Optional.
	Cursor string
}

// LabelsPage is one page of labels, in the order they were first given.
type LabelsPage struct {
	Labels []Label `json:"labels"`
	// Next continues the listing (pass it as cursor); empty on the last page.
	Next string `json:"next,omitempty"`
}

// Labels lists the tenant's labels a page at a time.
func (s *Service) Labels(ctx context.Context, t store.Tenant, q LabelQuery) (LabelsPage, error) {
	if err := checkPage(q.Limit); err != nil {
		return LabelsPage{}, err
	}
	var after int64
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err == nil {
			after, err = strconv.ParseInt(string(b), 10, 64)
		}
		if err != nil || after < 0 {
			return LabelsPage{}, invalid("cursor %q: pass the next value of the previous page as it was", q.Cursor)
		}
	}
	ls, err := s.st.Labels(ctx, t.ID, store.LabelQuery{Scorer: q.Scorer, Labeller: q.Labeller, AfterID: after, Limit: q.Limit + 1})
	if err != nil {
		return LabelsPage{}, err
	}
	var p LabelsPage
	if len(ls) > q.Limit {
		ls = ls[:q.Limit]
		p.Next = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ls[len(ls)-1].ID, 10)))
	}
	p.Labels = make([]Label, 0, len(ls))
	for _, l := range ls {
		p.Labels = append(p.Labels, labelView(l))
	}
	return p, nil
}

// LabelLine is one line of a label import: a label with the run and scorer it is for.
type LabelLine struct {
	RunID  string `json:"run_id"`
	Scorer string `json:"scorer"`
	LabelInput
}

// ImportedLabel says what happened to one line of a label import.
type ImportedLabel struct {
	Line   int    `json:"line"`
	RunID  string `json:"run_id,omitempty"`
	Scorer string `json:"scorer,omitempty"`
	// Status is stored (a new label), replaced (the labeller's earlier label of the run
	// for the scorer was replaced) or rejected.
	Status string `json:"status" enum:"stored,replaced,rejected"`
	// Error says why a rejected line was rejected and what to fix.
	Error string `json:"error,omitempty"`
}

// Outcomes of one label of an import.
const (
	LabelStored   = "stored"
	LabelReplaced = "replaced"
	LabelRejected = "rejected"
)

// LabelImportResult is the answer to a label import.
type LabelImportResult struct {
	Stored   int             `json:"stored"`
	Replaced int             `json:"replaced"`
	Rejected int             `json:"rejected"`
	Lines    []ImportedLabel `json:"lines"`
}

// ImportLabels stores labels from JSONL: one LabelLine a line (blank lines ignored). A bad
// line (not JSON, an unknown field, no such run, a value out of range) is rejected with
// its line number and the reason, and the good ones are stored, in one transaction.
func (s *Service) ImportLabels(ctx context.Context, t store.Tenant, body []byte) (LabelImportResult, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	type good struct {
		at   int
		line LabelLine
	}
	var (
		res   LabelImportResult
		goods []good
		ids   []string
	)
	for i, raw := range bytes.Split(body, []byte("\n")) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		il := ImportedLabel{Line: i + 1}
		ll, err := decodeLabelLine(raw)
		il.RunID, il.Scorer = ll.RunID, ll.Scorer
		if err == nil {
			err = checkLabeller(ctx, ll.Labeller)
		}
		if err != nil {
			il.Status, il.Error = LabelRejected, err.Error()
			res.Rejected++
		} else {
			goods = append(goods, good{at: len(res.Lines), line: ll})
			ids = append(ids, ll.RunID)
		}
		res.Lines = append(res.Lines, il)
	}
	if len(res.Lines) == 0 {
		return res, invalid(`no labels: send JSONL, one label a line, e.g. {"run_id": "r1", "scorer": "relevancy", "labeller": "ana", "passed": false}`)
	}
	runs, err := s.st.RunsByID(ctx, t.ID, ids)
	if err != nil {
		return res, err
	}
	pks := make(map[string]int64, len(runs))
	for _, r := range runs {
		pks[r.ID] = r.PK
	}
	err = s.st.InTx(ctx, func(tx *store.Tx) error {
		for _, g := range goods {
			il := &res.Lines[g.at]
			pk, ok := pks[g.line.RunID]
			if !ok {
				il.Status, il.Error = LabelRejected, fmt.Sprintf("no run %q in tenant %q; store the run first (scorekit runs import, POST /v1/runs)", g.line.RunID, t.Name)
				continue
			}
			_, created, err := tx.PutLabel(ctx, t.ID, newLabel(pk, g.line.Scorer, g.line.LabelInput))
			if err != nil {
				return err
			}
			il.Status = LabelReplaced
			if created {
				il.Status = LabelStored
			}
		}
		return nil
	})
	if err != nil {
		return LabelImportResult{}, err
	}
	res.Stored, res.Replaced, res.Rejected = 0, 0, 0
	for _, il := range res.Lines {
		switch il.Status {
		case LabelStored:
			res.Stored++
		case LabelReplaced:
			res.Replaced++
		default:
			res.Rejected++
		}
	}
	return res, nil
}

// decodeLabelLine reads one import line strictly: a misspelt field is an error, not a
// label without its value.
func decodeLabelLine(raw []byte) (LabelLine, error) {
	var ll LabelLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ll); err != nil {
		// The line is flat; Go names an embedded struct's field by its path of types.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Field = te.Field[strings.LastIndex(te.Field, ".")+1:]
		}
		return ll, fmt.Errorf("%s (fields: run_id, scorer, labeller, passed, score, choice, note)", jsonError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ll, errors.New("data after the label: one label a line")
	}
	if ll.RunID == "" {
		return ll, errors.New(`missing "run_id": the id of a stored run`)
	}
	if err := ll.LabelInput.check(ll.Scorer); err != nil {
		return ll, err
	}
	return ll, nil
}
