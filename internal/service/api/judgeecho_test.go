package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
)

// A judge that answers with the Authorization header it got, as the choice a rubric asks
// for: tenant a calls it with its own key (endpoint "team"), tenant b with the operator's
// (the default endpoint). The rubric's "not one of the choices" reason quotes the answer,
// and judge_error is retried, so the answer reaches the result, its steps, the stored
// result, the export and River's job errors. None of them holds either key; each holds the
// reason, scrubbed. Before, the broker passed answers on as they came.
func TestJudgeAnswerEchoingTheKey(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		echo := `{"reasoning": "you sent ` + judgetest.EchoPlaceholder + `", "choice": "` + judgetest.EchoPlaceholder + `"}`
		main := judgetest.New(judgetest.Rule{Reply: echo, EchoAuth: true})
		defer main.Close()
		team := judgetest.New(judgetest.Rule{Reply: echo, EchoAuth: true})
		defer team.Close()
		keyring, err := secrets.New(secrets.NewKey())
		if err != nil {
			t.Fatal(err)
		}
		f := newJudgeFixture(t, dsn, keyring, main, team)
		if r := f.do(t, "a", "PUT", "/v1/judge/endpoints/team/key", `{"key": "`+tenantSecret+`"}`); r.status != http.StatusNoContent {
			t.Fatalf("store a's key: %d %s", r.status, r.body)
		}
		if r := f.do(t, "a", "PUT", "/v1/agents/bot/policy", `{"scorers": ["prescreen"], "sample_rate": 0, "judge": {"endpoint": "team"}}`); r.status != 200 {
			t.Fatalf("a's policy: %d %s", r.status, r.body)
		}
		const rubric = `{"limit": 10, "scorers": ["rubric"], "config": {"rubric": {"instructions": "Is the answer right?", "choices": {"yes": 1, "no": 0}}}}`
		held := map[string]string{"a": tenantSecret[len("sk-tenant-a-"):], "operator": "sk-operator-main"}
		scrubbed := map[string]string{"a": "[tenant key]", "b": "[operator key]"}
		for tenant, agent := range map[string]string{"a": "bot", "b": "helper"} {
			if r := f.do(t, tenant, "POST", "/v1/runs", `{"id": "`+tenant+`1", "agent": "`+agent+`", "input": "What is 2+2?", "output": "4"}`); r.status != 200 {
				t.Fatalf("%s's run: %d %s", tenant, r.status, r.body)
			}
			r := f.do(t, tenant, "POST", "/v1/agents/"+agent+"/evaluations", rubric)
			var ev service.EvaluationView
			r.json(t, &ev)
			r = f.do(t, tenant, "GET", "/v1/evaluations/"+ev.ID+"?wait=60s&steps=true", "")
			r.json(t, &ev)
			if ev.Status != service.StatusDone || len(ev.Results) != 1 {
				t.Fatalf("%s's evaluation: %s", tenant, r.body)
			}
			res := ev.Results[0]
			body := string(mustJSON(t, res))
			if res.Status != "failed" || !strings.Contains(body, "which is not one of the choices") || !strings.Contains(body, `Bearer `+scrubbed[tenant]) {
				t.Fatalf("%s's result: %s; want failed, the reason quoting the answer, its key scrubbed", tenant, body)
			}
			if len(res.Steps) == 0 || !strings.Contains(string(mustJSON(t, res.Steps)), "you sent Bearer "+scrubbed[tenant]) {
				t.Fatalf("%s's result steps: %s; want the judge's answer, scrubbed", tenant, mustJSON(t, res.Steps))
			}
			if r := f.do(t, tenant, "GET", "/v1/export", ""); r.status != 200 || !strings.Contains(string(r.body), "which is not one of the choices") {
				t.Fatalf("%s's export: %d %.500s", tenant, r.status, r.body)
			}
		}
		if got := team.Requests(); len(got) == 0 || got[0].Authorization != "Bearer "+tenantSecret {
			t.Fatalf("the team endpoint got %+v; want a's calls with a's key", got)
		}

		// Every API answer (results, steps, exports), and what the store keeps: results
		// and River's job errors, which hold the first attempt's reason.
		f.mu.Lock()
		answers := f.answers
		f.mu.Unlock()
		for whose, secret := range held {
			for _, body := range answers {
				if strings.Contains(string(body), secret) {
					t.Errorf("an API answer holds %s's key: %.1000s", whose, body)
				}
			}
		}
		stored := storedText(t, f.env.Store)
		for what, texts := range stored {
			reasons := 0
			for _, text := range texts {
				if strings.Contains(text, "which is not one of the choices") {
					reasons++
				}
				for whose, secret := range held {
					if strings.Contains(text, secret) {
						t.Errorf("%s holds %s's key: %.1000s", what, whose, text)
					}
				}
			}
			if reasons < 2 {
				t.Errorf("%s: %d rows hold the rubric's reason; want both tenants' (%d rows)", what, reasons, len(texts))
			}
		}
	})
}

// storedText reads, straight from the database, the stored results and River's job
// errors, as text.
func storedText(t *testing.T, st *store.Store) map[string][]string {
	t.Helper()
	ctx := context.Background()
	queries := map[string]string{
		"results":            `SELECT CAST(result AS TEXT) FROM results`,
		"River's job errors": `SELECT COALESCE(CAST(errors AS TEXT), '') FROM river_job WHERE kind = 'scorekit_evaluate'`,
	}
	out := map[string][]string{}
	for what, q := range queries {
		var texts []string
		if st.Pool() != nil {
			rows, err := st.Pool().Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, s)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		} else {
			rows, err := st.SQLDB().QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, s)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
		out[what] = texts
	}
	return out
}
