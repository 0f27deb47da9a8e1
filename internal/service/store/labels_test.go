package store_test

import (
	"context"
	"testing"

	"github.com/scorekit/scorekit/internal/service/store"
)

// Deleting a run deletes its labels (the foreign key cascades, on both databases), and
// RunsWithLabels then no longer names it.
func TestLabelsGoWithTheirRun(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		tn, err := s.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		pks, err := s.PutRuns(ctx, tn.ID, []store.NewRun{
			{ID: "r1", Agent: "bot", Body: []byte(`{"id":"r1","agent":"bot","output":"a"}`)},
			{ID: "r2", Agent: "bot", Body: []byte(`{"id":"r2","agent":"bot","output":"b"}`)},
		})
		if err != nil {
			t.Fatal(err)
		}
		pass := true
		for _, pk := range pks {
			if _, _, err := s.PutLabel(ctx, tn.ID, store.NewLabel{RunPK: pk, Scorer: "relevancy", Labeller: "ana", Passed: &pass}); err != nil {
				t.Fatal(err)
			}
		}
		del := `DELETE FROM runs WHERE id = $1`
		if s.Database() == store.SQLite {
			_, err = s.SQLDB().ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, pks[0])
		} else {
			_, err = s.Pool().Exec(ctx, del, pks[0])
		}
		if err != nil {
			t.Fatalf("delete a labelled run: %v", err)
		}
		ls, err := s.Labels(ctx, tn.ID, store.LabelQuery{})
		if err != nil || len(ls) != 1 || ls[0].RunID != "r2" {
			t.Fatalf("labels after deleting r1: %+v, %v", ls, err)
		}
		with, err := s.RunsWithLabels(ctx, tn.ID, pks)
		if err != nil || with[pks[0]] || !with[pks[1]] {
			t.Fatalf("runs with labels = %v, %v", with, err)
		}
	})
}
