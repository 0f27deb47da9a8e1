package service_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

func ptr[T any](v T) *T { return &v }

const threeRuns = `{"id": "r1", "agent": "bot", "input": "q1", "output": "a1"}
{"id": "r2", "agent": "bot", "input": "q2", "output": "a2"}
{"id": "r3", "agent": "bot", "input": "q3", "output": "a3"}`

func TestLabelsPutListDelete(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc := env.Service
		acme, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		other, _ := svc.CreateTenant(ctx, "other", store.Policy{})
		for _, tn := range []store.Tenant{acme, other} {
			if res, err := svc.ImportRuns(ctx, tn, []byte(threeRuns), service.ImportOptions{}); err != nil || res.Stored != 3 {
				t.Fatalf("import: %+v, %v", res, err)
			}
		}
		in := service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: ptr(false), Note: "answers another question"}}
		l, created, err := svc.PutLabel(ctx, acme, "r1", "relevancy", in)
		if err != nil || !created || l.RunID != "r1" || l.Agent != "bot" || *l.Passed || l.Note != in.Note {
			t.Fatalf("first label: %+v, created %v, %v", l, created, err)
		}
		// The same person labelling again replaces their label.
		in.Passed = ptr(true)
		if l, created, err = svc.PutLabel(ctx, acme, "r1", "relevancy", in); err != nil || created || !*l.Passed {
			t.Fatalf("relabel: %+v, created %v, %v", l, created, err)
		}
		// Another person labels the same run apart; a score and a choice are labels too.
		must := func(run, scorer string, in service.LabelInput) {
			t.Helper()
			if _, _, err := svc.PutLabel(ctx, acme, run, scorer, in); err != nil {
				t.Fatalf("label %s/%s: %v", run, scorer, err)
			}
		}
		must("r1", "relevancy", service.LabelInput{Labeller: "ben", LabelValue: service.LabelValue{Passed: ptr(false)}})
		must("r2", "relevancy", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Score: ptr(0.25)}})
		must("r2", "tone", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Choice: ptr("curt"), Score: ptr(0.5)}})
		ls, err := svc.RunLabels(ctx, acme, "r1", "")
		if err != nil || len(ls) != 2 || ls[0].Labeller != "ana" || ls[1].Labeller != "ben" {
			t.Fatalf("run labels: %+v, %v", ls, err)
		}

		// Another tenant's run is not found, for every operation; its own run r1 has no
		// labels.
		if _, _, err := svc.PutLabel(ctx, other, "nope", "relevancy", in); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("label of a missing run: %v", err)
		}
		if ls, err := svc.RunLabels(ctx, other, "r1", ""); err != nil || len(ls) != 0 {
			t.Fatalf("other tenant sees %d labels of its r1, %v", len(ls), err)
		}
		if err := svc.DeleteLabel(ctx, other, "r1", "relevancy", "ana"); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("other tenant deleted acme's label: %v", err)
		}
		if p, err := svc.Labels(ctx, other, service.LabelQuery{Limit: 10}); err != nil || len(p.Labels) != 0 {
			t.Fatalf("other tenant lists %d labels, %v", len(p.Labels), err)
		}

		bad := []struct {
			name string
			in   service.LabelInput
			want string
		}{
			{"no value", service.LabelInput{Labeller: "ana"}, "exactly one of"},
			{"two values", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: ptr(true), Score: ptr(1.0)}}, "exactly one of"},
			{"score above 1", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Score: ptr(1.5)}}, "want 0 to 1"},
			{"score NaN", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Score: ptr(math.NaN())}}, "want 0 to 1"},
			{"no labeller", service.LabelInput{LabelValue: service.LabelValue{Passed: ptr(true)}}, "labeller"},
			{"note too long", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: ptr(true), Note: strings.Repeat("x", service.MaxLabelNoteBytes+1)}}, "note"},
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) {
				if _, _, err := svc.PutLabel(ctx, acme, "r3", "relevancy", c.in); !errors.Is(err, service.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v; want ErrInvalid naming %q", err, c.want)
				}
			})
		}
		if ls, _ := svc.RunLabels(ctx, acme, "r3", ""); len(ls) != 0 {
			t.Fatalf("a refused label was stored: %+v", ls)
		}

		// The tenant's labels a page at a time, and by scorer.
		var pages [][]string
		cursor := ""
		for {
			p, err := svc.Labels(ctx, acme, service.LabelQuery{Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			var page []string
			for _, l := range p.Labels {
				page = append(page, l.RunID+"/"+l.Scorer+"/"+l.Labeller)
			}
			pages = append(pages, page)
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if got := fmt.Sprint(pages); got != "[[r1/relevancy/ana r1/relevancy/ben] [r2/relevancy/ana r2/tone/ana]]" {
			t.Fatalf("pages = %s", got)
		}
		if p, err := svc.Labels(ctx, acme, service.LabelQuery{Limit: 10, Scorer: "tone"}); err != nil || len(p.Labels) != 1 || *p.Labels[0].Choice != "curt" {
			t.Fatalf("tone labels: %+v, %v", p, err)
		}
		if _, err := svc.Labels(ctx, acme, service.LabelQuery{Limit: 10, Cursor: "%%"}); !errors.Is(err, service.ErrInvalid) {
			t.Fatalf("bad cursor: %v", err)
		}

		// Retention keeps labelled runs.
		runs, _ := env.Store.RunsByID(ctx, acme.ID, []string{"r1", "r2", "r3"})
		var pks []int64
		labelled := map[string]bool{}
		for _, r := range runs {
			pks = append(pks, r.PK)
		}
		with, err := env.Store.RunsWithLabels(ctx, acme.ID, pks)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			labelled[r.ID] = with[r.PK]
		}
		if fmt.Sprint(labelled) != "map[r1:true r2:true r3:false]" {
			t.Fatalf("runs with labels = %v", labelled)
		}

		if err := svc.DeleteLabel(ctx, acme, "r1", "relevancy", "ben"); err != nil {
			t.Fatal(err)
		}
		if err := svc.DeleteLabel(ctx, acme, "r1", "relevancy", "ben"); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
		if ls, _ := svc.RunLabels(ctx, acme, "r1", "relevancy"); len(ls) != 1 || ls[0].Labeller != "ana" {
			t.Fatalf("after delete: %+v", ls)
		}
	})
}

func TestImportLabelsReportsBadLinesKeepsGoodOnes(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true}).Service
		acme, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		if _, err := svc.ImportRuns(ctx, acme, []byte(threeRuns), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		body := strings.Join([]string{
			`{"run_id": "r1", "scorer": "relevancy", "labeller": "ana", "passed": true}`,
			`{"run_id": "r2", "scorer": "relevancy", "labeller": "ana", "pased": true}`,
			``,
			`{"run_id": "r2", "scorer": "relevancy", "labeller": "ana", "score": 2}`,
			`{"run_id": "ghost", "scorer": "relevancy", "labeller": "ana", "passed": false}`,
			`{"run_id": "r3", "scorer": "relevancy", "labeller": "ana", "passed": false`,
			`{"run_id": "r3", "scorer": "relevancy", "labeller": "ana", "score": 0.75, "note": "mostly"}`,
			`{"run_id": "r1", "scorer": "relevancy", "labeller": "ana", "passed": false}`,
		}, "\n")
		res, err := svc.ImportLabels(ctx, acme, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if res.Stored != 2 || res.Replaced != 1 || res.Rejected != 4 {
			t.Fatalf("stored %d replaced %d rejected %d: %+v", res.Stored, res.Replaced, res.Rejected, res.Lines)
		}
		want := map[int]string{2: `unknown field "pased"`, 4: "score 2", 5: `no run "ghost"`, 6: "unexpected EOF"}
		for _, l := range res.Lines {
			w, bad := want[l.Line]
			if bad != (l.Status == service.LabelRejected) || (bad && !strings.Contains(l.Error, w)) {
				t.Fatalf("line %d: %+v; want rejected=%v naming %q", l.Line, l, bad, w)
			}
		}
		ls, _ := svc.RunLabels(ctx, acme, "r1", "")
		if len(ls) != 1 || *ls[0].Passed {
			t.Fatalf("r1's label: %+v; want the last line's fail", ls)
		}
		if _, err := svc.ImportLabels(ctx, acme, []byte("\n\n")); !errors.Is(err, service.ErrInvalid) {
			t.Fatalf("empty import: %v", err)
		}
	})
}

// TestScorerAgreement labels an evaluation's runs from its own results with chosen runs
// flipped, and checks that the service's figures are the agreement package's on exactly
// those pairs, that the flipped runs are the disagreements, that two people's agreement
// with each other is beside it, and that unscored labelled runs are counted.
func TestScorerAgreement(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		set := seedSet(t)
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		acme, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		if _, err := svc.ImportRuns(ctx, acme, jsonl(t, set.Files()[0]), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		agent := set.Files()[0].Runs[0].Agent
		ev, err := svc.CreateEvaluation(ctx, acme, agent, service.EvaluationRequest{Limit: 30})
		if err != nil {
			t.Fatal(err)
		}
		v, err := svc.WaitEvaluation(ctx, acme, ev.ID, 30*time.Second, service.ViewOptions{Results: true})
		if err != nil || v.Status != service.StatusDone || len(v.Results) != 30 {
			t.Fatalf("evaluation: %s, %d results, %v", v.Status, len(v.Results), err)
		}
		version := v.Results[0].ScorerVersion

		// ana agrees with the scorer except on every fifth run; ben agrees with ana except
		// on runs 1 and 2 (which become ties: left out of the majority).
		var want []agreement.Pair[bool]
		var flipped []string
		labels := map[string]bool{}
		for i, r := range v.Results {
			if r.Status != "scored" || r.Passed == nil {
				continue
			}
			ana := *r.Passed
			if i%5 == 0 {
				ana = !ana
				flipped = append(flipped, r.RunID)
			}
			ben := ana
			if i == 1 || i == 2 {
				ben = !ana
			}
			for who, verdict := range map[string]bool{"ana": ana, "ben": ben} {
				if _, _, err := svc.PutLabel(ctx, acme, r.RunID, "prescreen", service.LabelInput{Labeller: who, LabelValue: service.LabelValue{Passed: ptr(verdict)}}); err != nil {
					t.Fatal(err)
				}
			}
			labels[r.RunID] = ana
			if i != 1 && i != 2 {
				want = append(want, agreement.Pair[bool]{RunID: r.RunID, Want: ana, Got: *r.Passed})
			}
		}
		// Two labelled runs the evaluation did not reach (the oldest of the file).
		var unscored []string
		for _, r := range set.Files()[0].Runs {
			if _, ok := labels[r.ID]; !ok && len(unscored) < 2 && !slices.ContainsFunc(v.Results, func(x service.ResultView) bool { return x.RunID == r.ID }) {
				unscored = append(unscored, r.ID)
				if _, _, err := svc.PutLabel(ctx, acme, r.ID, "prescreen", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: ptr(true)}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(unscored) != 2 {
			t.Fatalf("the seed file has fewer than 32 runs")
		}
		slices.SortFunc(want, func(a, b agreement.Pair[bool]) int { return strings.Compare(a.RunID, b.RunID) })
		exp, err := agreement.PassFail(want)
		if err != nil {
			t.Fatal(err)
		}

		got, err := svc.ScorerAgreement(ctx, acme, service.AgreementRequest{Scorer: "prescreen"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != version || got.LabelledRuns != len(labels)+2 || fmt.Sprint(got.Labellers) != "[ana ben]" {
			t.Fatalf("version %q runs %d labellers %v", got.Version, got.LabelledRuns, got.Labellers)
		}
		if got.PassFail == nil || got.PassFail.Runs != exp.Runs || got.PassFail.Kappa != exp.Kappa || got.PassFail.Accuracy != exp.Accuracy ||
			got.PassFail.Confusion != exp.Confusion || got.PassFail.FailRecall != exp.FailRecall {
			t.Fatalf("pass/fail = %+v\nwant %+v", got.PassFail, exp)
		}
		var dis []string
		for _, d := range got.Disagreements {
			dis = append(dis, d.RunID)
			if d.Kind != service.KindPassFail || *d.People.Passed == *d.Scorer.Passed || len(d.Labels) != 2 || d.EvaluationID != ev.ID || d.Reason == "" && *d.Scorer.Passed {
				t.Fatalf("disagreement %+v", d)
			}
		}
		slices.Sort(dis)
		slices.Sort(flipped)
		if fmt.Sprint(dis) != fmt.Sprint(flipped) {
			t.Fatalf("disagreements %v; want the flipped runs %v", dis, flipped)
		}
		if !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.HasPrefix(n, "2 runs left out") }) {
			t.Fatalf("notes %v; want the two ties counted", got.Notes)
		}
		if len(got.People) != 1 || got.People[0].PassFail == nil || got.People[0].PassFail.Runs != len(labels) ||
			got.People[0].PassFail.Confusion.Missed+got.People[0].PassFail.Confusion.FalseAlarms != 2 {
			t.Fatalf("people = %+v; want ana and ben on %d runs, 2 apart", got.People, len(labels))
		}
		if ns := got.NotScored; ns.Runs != 2 || ns.NoResult != 2 || ns.NeedsJudge || ns.JudgeCalls != 0 || !strings.Contains(ns.Basis, "no judge") {
			t.Fatalf("not scored = %+v", ns)
		}
		// Scoring the two through the queue brings them into the figures.
		sl, err := svc.ScoreLabelled(ctx, acme, "prescreen", "")
		if err != nil || sl.Runs != 2 || len(sl.Evaluations) != 1 || sl.Version != version {
			t.Fatalf("score labelled: %+v, %v", sl, err)
		}
		if v, err := svc.WaitEvaluation(ctx, acme, sl.Evaluations[0], 30*time.Second, service.ViewOptions{Results: true}); err != nil || v.Status != service.StatusDone ||
			len(v.Results) != 2 || !slices.ContainsFunc(v.Results, func(r service.ResultView) bool { return r.RunID == unscored[0] }) {
			t.Fatalf("the labelled runs' evaluation: %+v, %v", v, err)
		}
		got, err = svc.ScorerAgreement(ctx, acme, service.AgreementRequest{Scorer: "prescreen"})
		if err != nil || got.NotScored.Runs != 0 || got.PassFail.Runs != exp.Runs+2 {
			t.Fatalf("after scoring them: not scored %+v, %d runs compared, %v", got.NotScored, got.PassFail.Runs, err)
		}
		if again, err := svc.ScoreLabelled(ctx, acme, "prescreen", ""); err != nil || again.Runs != 0 || len(again.Evaluations) != 0 {
			t.Fatalf("score labelled again: %+v, %v", again, err)
		}
		// One person's labels alone: no ties, no people beside.
		alone, err := svc.ScorerAgreement(ctx, acme, service.AgreementRequest{Scorer: "prescreen", Labeller: "ben"})
		if err != nil || alone.PassFail == nil || alone.PassFail.Runs != len(labels) || len(alone.People) != 0 {
			t.Fatalf("ben alone: %+v, %v", alone.PassFail, err)
		}
		if _, err := svc.ScorerAgreement(ctx, acme, service.AgreementRequest{Scorer: "relevancy"}); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("no labels: %v", err)
		}

		// A second version on the same runs: the gate's input pairs both versions on the
		// labelled runs both scored.
		if err := env.Queue.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		env2 := servicetest.New(t, dsn, servicetest.Options{Host: host.New(servicetest.Registry(t, map[string]string{"prescreen": version + "-fix"}))})
		ev2, err := env2.Service.CreateEvaluation(ctx, acme, agent, service.EvaluationRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if v2, err := env2.Service.WaitEvaluation(ctx, acme, ev2.ID, 30*time.Second, service.ViewOptions{}); err != nil || v2.Status != service.StatusDone {
			t.Fatalf("second evaluation: %v", err)
		}
		pf, sc, err := env2.Service.VersionTriples(ctx, acme, "", "prescreen", version+"-fix", version)
		if err != nil || len(sc) != 0 || len(pf) != 8 {
			t.Fatalf("triples: %d pass/fail, %d scores, %v", len(pf), len(sc), err)
		}
		for _, tr := range pf {
			if tr.Want != labels[tr.RunID] {
				t.Fatalf("triple %+v: want is not the label", tr)
			}
		}
		now, err := env2.Service.ScorerAgreement(ctx, acme, service.AgreementRequest{Scorer: "prescreen"})
		if err != nil || now.Version != version+"-fix" || len(now.Versions) != 2 || now.NotScored.OtherVersion != len(labels)+2-10 {
			t.Fatalf("after the second version: version %q versions %v not scored %+v, %v", now.Version, now.Versions, now.NotScored, err)
		}
	})
}

// The review queue: runs two versions disagree on first, then runs nearest the threshold,
// nearest first, then a sample; runs the labeller labelled are left out, another
// labeller's are not.
func TestReviewQueue(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc, st := env.Service, env.Store
		acme, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		var body strings.Builder
		for i := 1; i <= 7; i++ {
			fmt.Fprintf(&body, `{"id": "r%d", "agent": "bot", "input": "q", "output": "a"}`+"\n", i)
		}
		if _, err := svc.ImportRuns(ctx, acme, []byte(body.String()), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		runs, _ := st.RunsByID(ctx, acme.ID, []string{"r1", "r2", "r3", "r4", "r5", "r6", "r7"})
		pk := map[string]int64{}
		var pks []int64
		for _, r := range runs {
			pk[r.ID] = r.PK
			pks = append(pks, r.PK)
		}
		// "custom" is no registered scorer: its threshold is taken as 0.5.
		results := func(version string, scores map[string]float64) {
			err := st.InTx(ctx, func(tx *store.Tx) error {
				ev, err := tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: acme.ID, Agent: "bot", Trigger: store.TriggerRequest,
					Spec: store.Spec{Limit: len(pks), Scorers: []store.ScorerRef{{Name: "custom", Version: version}}}, RunPKs: pks})
				if err != nil {
					return err
				}
				var rs []store.Result
				for id, s := range scores {
					rs = append(rs, store.Result{TenantID: acme.ID, EvaluationPK: ev.PK, RunPK: pk[id], Scorer: "custom", ScorerVersion: version,
						Status: "scored", Score: ptr(s), Passed: ptr(s >= 0.5), Body: []byte(`{"status":"scored"}`)})
				}
				_, err = tx.InsertResults(ctx, rs)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		results("1", map[string]float64{"r1": 0.9, "r2": 0.55, "r3": 0.4, "r4": 0.95, "r5": 0.1, "r6": 0.5, "r7": 0.98})
		results("2", map[string]float64{"r1": 0.2}) // the new version fails r1
		if _, _, err := svc.PutLabel(ctx, acme, "r6", "custom", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: ptr(true)}}); err != nil {
			t.Fatal(err)
		}
		q, err := svc.ReviewQueue(ctx, acme, "custom", "", "ana", 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range q {
			got = append(got, it.RunID+":"+it.Why)
		}
		head := "[r1:versions_disagree r2:unsure r3:unsure"
		if s := fmt.Sprint(got); !strings.HasPrefix(s, head) || len(got) != 6 || slices.Contains(got, "r6:unsure") {
			t.Fatalf("queue = %v; want %s, then r4, r5 and r7 as a sample, and not r6 (ana labelled it)", got, head)
		}
		if !strings.Contains(q[0].Detail, "version 1 passed it, version 2 failed it") {
			t.Fatalf("why r1: %q", q[0].Detail)
		}
		// ben has labelled nothing: r6, the nearest the threshold, comes right after r1.
		q, _ = svc.ReviewQueue(ctx, acme, "custom", "", "ben", 2)
		if len(q) != 2 || q[1].RunID != "r6" {
			t.Fatalf("ben's queue = %+v", q)
		}
	})
}
