package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/web"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// The review form without a browser: the token is tied to the session (another session's
// token, or none, is refused), a label is stored through the form, a run of another
// tenant is a 404 to read and to label, and the agreement page counts the label.
func TestReviewForm(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	ctx := context.Background()
	a, a2, b := newBrowser(t, in.srv.URL), newBrowser(t, in.srv.URL), newBrowser(t, in.srv.URL)
	a.signIn(in.keyA)
	a2.signIn(in.keyA)
	b.signIn(in.keyB)

	p := a.get("/review/prescreen?labeller=ana")
	m := csrfField.FindStringSubmatch(p.body)
	run := regexp.MustCompile(`data-run="([^"]+)"`).FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || run == nil {
		t.Fatalf("review page: %d\n%s", p.status, p.body)
	}
	token, id := m[1], run[1]
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}
	form := func(tok, verdict string) url.Values {
		return url.Values{"csrf": {tok}, "labeller": {"ana"}, "criterion": {"prescreen"}, "verdict": {verdict}, "note": {"checked by hand"}}
	}
	path := "/review/prescreen/runs/" + url.PathEscape(id)

	// The second session of the same tenant has its own token: a's does not work there.
	a2tok := csrfField.FindStringSubmatch(a2.get("/review/prescreen?labeller=ana").body)[1]
	if a2tok == token {
		t.Fatal("two sessions have the same form token")
	}
	cases := []struct {
		name   string
		who    *browser
		form   url.Values
		header map[string]string
		status int
	}{
		{"no token", a, url.Values{"labeller": {"ana"}, "verdict": {"fail"}}, same, http.StatusForbidden},
		{"another session's token", a, form(a2tok, "fail"), same, http.StatusForbidden},
		{"cross-site", a, form(token, "fail"), map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"other origin", a, form(token, "fail"), map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"no verdict", a, form(token, "maybe"), same, http.StatusBadRequest},
		{"another tenant's session", b, form(csrfField.FindStringSubmatch(b.get("/review/prescreen?labeller=ana&run=b-run").body)[1], "fail"), same, http.StatusNotFound},
	}
	for _, c := range cases {
		if got := c.who.do("POST", path, c.form, c.header); got.status != c.status {
			t.Errorf("%s: %d; want %d\n%s", c.name, got.status, c.status, got.body)
		}
	}
	if ls, err := in.env.Service.RunLabels(ctx, in.a, id, ""); err != nil || len(ls) != 0 {
		t.Fatalf("a refused post stored a label: %+v, %v", ls, err)
	}

	got := a.do("POST", path, form(token, "fail"), same)
	if got.status != http.StatusSeeOther || !strings.Contains(got.header.Get("Location"), "saved="+url.QueryEscape(id)) {
		t.Fatalf("label: %d %v", got.status, got.header)
	}
	ls, err := in.env.Service.RunLabels(ctx, in.a, id, "prescreen")
	if err != nil || len(ls) != 1 || ls[0].Labeller != "ana" || *ls[0].Passed || ls[0].Note != "checked by hand" {
		t.Fatalf("stored labels: %+v, %v", ls, err)
	}
	// The next page shows another run: the labelled one left the queue.
	next := a.get(got.header.Get("Location"))
	if next.status != 200 || strings.Contains(next.body, `data-run="`+id+`"`) || !strings.Contains(next.body, "saved your label of "+id) {
		t.Fatalf("after labelling: %d\n%s", next.status, next.body)
	}

	// Another tenant's run: 404 to open for review, and to label.
	if p := a.get("/review/prescreen?labeller=ana&run=b-run"); p.status != http.StatusNotFound {
		t.Errorf("a reviews b's run: %d", p.status)
	}
	if p := a.do("POST", "/review/prescreen/runs/b-run", form(token, "pass"), same); p.status != http.StatusNotFound {
		t.Errorf("a labels b's run: %d", p.status)
	}
	if ls, _ := in.env.Service.RunLabels(ctx, in.b, "b-run", ""); len(ls) != 0 {
		t.Fatalf("b's run got a's label: %+v", ls)
	}

	// The agreement page: prescreen with its one label, its version and what it agreed.
	ag := a.get("/agreement")
	if ag.status != 200 || !regexp.MustCompile(`data-scorer="prescreen">.*?<td class="labels">1</td>`).MatchString(ag.body) {
		t.Fatalf("agreement page: %d\n%s", ag.status, ag.body)
	}
	if bg := b.get("/agreement"); bg.status != 200 || strings.Contains(bg.body, `data-scorer="prescreen"`) {
		t.Fatalf("b's agreement page shows a's labels:\n%s", bg.body)
	}
}

// A rubric's choices are a submit button each; the label keeps the choice and the score
// the rubric gives it, read from the evaluation, not from the form.
func TestReviewChoices(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	ctx := context.Background()
	st := in.env.Store
	run, err := st.Run(ctx, in.a.ID, "email-triage-0001")
	if err != nil {
		t.Fatal(err)
	}
	rubric := func(version string, score float64) {
		t.Helper()
		err := st.InTx(ctx, func(tx *store.Tx) error {
			ev, err := tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: in.a.ID, Agent: run.Agent, Trigger: store.TriggerRequest, RunPKs: []int64{run.PK},
				Spec: store.Spec{Limit: 1, Scorers: []store.ScorerRef{{Name: "rubric", Version: version}},
					Config: map[string]json.RawMessage{"rubric": json.RawMessage(`{"choices": {"correct": 1, "partly correct": 0.5, "wrong": 0}}`)}}})
			if err != nil {
				return err
			}
			passed := score >= 0.5
			_, err = tx.InsertResults(ctx, []store.Result{{TenantID: in.a.ID, EvaluationPK: ev.PK, RunPK: run.PK, Scorer: "rubric", ScorerVersion: version,
				Status: "scored", Score: &score, Passed: &passed, Body: []byte(`{"status":"scored","reason":"the judge's verdict"}`)}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rubric("1", 0.5)
	a := newBrowser(t, in.srv.URL)
	a.signIn(in.keyA)
	p := a.get("/review/rubric?labeller=ana")
	for _, want := range []string{`data-run="email-triage-0001"`, `name="choice" value="correct" id="choice-0" accesskey="1"`,
		`name="choice" value="partly correct" id="choice-1" accesskey="2"`, `name="choice" value="wrong" id="choice-2" accesskey="3"`} {
		if !strings.Contains(p.body, want) {
			t.Fatalf("review page lacks %s:\n%s", want, p.body)
		}
	}
	from := regexp.MustCompile(`name="choices_from" value="([^"]+)"`).FindStringSubmatch(p.body)[1]
	form := url.Values{"csrf": {csrfField.FindStringSubmatch(p.body)[1]}, "labeller": {"ana"}, "choices_from": {from}, "score": {"0.9"}}
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}
	form.Set("choice", "best")
	if got := a.do("POST", "/review/rubric/runs/email-triage-0001", form, same); got.status != http.StatusBadRequest || !strings.Contains(got.body, "not one of the rubric") {
		t.Fatalf("an unknown choice: %d\n%s", got.status, got.body)
	}
	form.Set("choice", "partly correct")
	if got := a.do("POST", "/review/rubric/runs/email-triage-0001", form, same); got.status != http.StatusSeeOther {
		t.Fatalf("a choice: %d\n%s", got.status, got.body)
	}
	ls, err := in.env.Service.RunLabels(ctx, in.a, "email-triage-0001", "rubric")
	if err != nil || len(ls) != 1 || *ls[0].Choice != "partly correct" || *ls[0].Score != 0.5 || ls[0].Passed != nil {
		t.Fatalf("stored: %+v, %v", ls, err)
	}
	// A choice with its score is compared with the rubric's scores.
	ag, err := in.env.Service.ScorerAgreement(ctx, in.a, service.AgreementRequest{Scorer: "rubric"})
	if err != nil || ag.Scores == nil || ag.Scores.Runs != 1 || ag.Scores.MAE.Value != 0 {
		t.Fatalf("agreement: %+v, %v", ag.Scores, err)
	}
	// A choice given without its score (through the API or a file) takes the score the
	// rubric of the compared result's evaluation gives it; an unknown choice is left out.
	for who, choice := range map[string]string{"ben": "correct", "cem": "brilliant"} {
		if _, _, err := in.env.Service.PutLabel(ctx, in.a, "email-triage-0001", "rubric", service.LabelInput{Labeller: who, LabelValue: service.LabelValue{Choice: &choice}}); err != nil {
			t.Fatal(err)
		}
	}
	ag, err = in.env.Service.ScorerAgreement(ctx, in.a, service.AgreementRequest{Scorer: "rubric"})
	if err != nil || ag.Scores == nil || ag.Scores.MAE.Value != 0.25 || len(ag.Notes) != 1 || !strings.HasPrefix(ag.Notes[0], "1 choice labels left out") {
		t.Fatalf("choices without scores: %+v, notes %v, %v", ag.Scores, ag.Notes, err)
	}
	// A second version: the agreement page lists both, the newest first.
	rubric("2", 1)
	page := a.get("/agreement")
	rows := regexp.MustCompile(`(?s)<table class="versions" data-scorer="rubric">.*?</table>`).FindString(page.body)
	v2, v1 := strings.Index(rows, `data-version="2"`), strings.Index(rows, `data-version="1"`)
	if page.status != 200 || v2 < 0 || v1 < v2 {
		t.Fatalf("agreement by version: %d\n%s", page.status, page.body)
	}
}

// A read key looks at the review and changes nothing: the page has no form, and a label
// posted anyway is refused 403 naming the scope it needs.
func TestReviewReadKey(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	ctx := context.Background()
	readKey, _, err := in.env.Service.CreateScopedKey(ctx, "a", store.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	admin, reader := newBrowser(t, in.srv.URL), newBrowser(t, in.srv.URL)
	admin.signIn(in.keyA)
	reader.signIn(readKey)
	p := reader.get("/review/prescreen?labeller=ana")
	run := regexp.MustCompile(`data-run="([^"]+)"`).FindStringSubmatch(p.body)
	if p.status != 200 || run == nil || !strings.Contains(p.body, `id="read-only"`) || strings.Contains(p.body, `class="label"`) {
		t.Fatalf("review page for a read key: %d\n%s", p.status, p.body)
	}
	// The page carries no form token for it; the scope is checked before the token, so
	// whatever the form holds, the answer names the scope.
	form := url.Values{"csrf": {"any"}, "labeller": {"ana"}, "criterion": {"prescreen"}, "verdict": {"fail"}}
	got := reader.do("POST", "/review/prescreen/runs/"+url.PathEscape(run[1]), form, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if got.status != http.StatusForbidden || !strings.Contains(got.body, "scope label") || !strings.Contains(got.body, "--scope label --labeller NAME") {
		t.Fatalf("a read key labels: %d\n%s", got.status, got.body)
	}
	if ls, err := in.env.Service.RunLabels(ctx, in.a, run[1], ""); err != nil || len(ls) != 0 {
		t.Fatalf("a read key's label was stored: %+v, %v", ls, err)
	}
	if p := admin.get("/review/prescreen?labeller=ana"); !strings.Contains(p.body, `class="label"`) || strings.Contains(p.body, `id="read-only"`) {
		t.Fatalf("review page for an admin key has no form:\n%s", p.body)
	}
}

// A session opened with a label key labels under the key's labeller whatever the page's
// address or the form say: the page shows that name, a forged form naming another
// labeller is refused with the name the key may use, and the form labels as the key's.
func TestReviewLabelKey(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	ctx := context.Background()
	key, _, err := in.env.Service.CreateLabellerKey(ctx, "a", "ana")
	if err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, in.srv.URL)
	br.signIn(key)
	p := br.get("/review/prescreen?labeller=bob")
	m := csrfField.FindStringSubmatch(p.body)
	run := regexp.MustCompile(`data-run="([^"]+)"`).FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || run == nil || !strings.Contains(p.body, `<b id="labeller-name">ana</b> (your key's name)`) || strings.Contains(p.body, `id="read-only"`) {
		t.Fatalf("review page for a label key: %d\n%s", p.status, p.body)
	}
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}
	path := "/review/prescreen/runs/" + url.PathEscape(run[1])
	forged := url.Values{"csrf": {m[1]}, "labeller": {"bob"}, "criterion": {"prescreen"}, "verdict": {"fail"}}
	if got := br.do("POST", path, forged, same); got.status != http.StatusForbidden || !strings.Contains(got.body, "as &#34;ana&#34; only") {
		t.Fatalf("a label key's form naming bob: %d\n%s", got.status, got.body)
	}
	form := url.Values{"csrf": {m[1]}, "labeller": {"ana"}, "criterion": {"prescreen"}, "verdict": {"pass"}}
	if got := br.do("POST", path, form, same); got.status != http.StatusSeeOther {
		t.Fatalf("a label key labels: %d\n%s", got.status, got.body)
	}
	ls, err := in.env.Service.RunLabels(ctx, in.a, run[1], "")
	if err != nil || len(ls) != 1 || ls[0].Labeller != "ana" || !*ls[0].Passed {
		t.Fatalf("stored labels: %+v, %v; want ana's pass alone", ls, err)
	}
}
