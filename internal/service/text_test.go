package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestImportRepairsText: text a database cannot hold (NUL, invalid UTF-8, a lone
// surrogate), anywhere in a run, is stored with U+FFFD in its place and the run flagged
// repaired, never rejected, the same on both backends; the good runs beside it are kept.
func TestImportRepairsText(t *testing.T) {
	lines := []struct {
		name, line string
		// id and output are what is stored.
		id, output string
		repaired   bool
	}{
		{name: "good", line: `{"id": "g1", "agent": "bot", "input": "q", "output": "fine"}`, id: "g1", output: "fine"},
		{name: "NUL", line: `{"id": "nul", "agent": "bot", "input": "q", "output": "a\u0000b"}`, id: "nul", output: "a\uFFFDb", repaired: true},
		{name: "invalid UTF-8", line: "{\"id\": \"utf8\", \"agent\": \"bot\", \"input\": \"q\", \"output\": \"a\xffb\xc3\"}", id: "utf8", output: "a\uFFFDb\uFFFD", repaired: true},
		{name: "lone surrogate", line: `{"id": "sur", "agent": "bot", "input": "q", "output": "a\ud800b\udc00"}`, id: "sur", output: "a\uFFFDb\uFFFD", repaired: true},
		{name: "a pair is kept", line: `{"id": "pair", "agent": "bot", "input": "q", "output": "\ud83d\ude00"}`, id: "pair", output: "😀"},
		{name: "escaped backslash is text", line: `{"id": "bs", "agent": "bot", "input": "q", "output": "\\u0000"}`, id: "bs", output: `\u0000`},
		{name: "NUL in the id", line: `{"id": "x\u0000y", "agent": "bot", "input": "q", "output": "o"}`, id: "x\uFFFDy", output: "o", repaired: true},
		{name: "NUL in metadata", line: `{"id": "meta", "agent": "bot", "input": "q", "output": "o", "metadata": {"k\u0000": ["\u0000"]}}`, id: "meta", output: "o", repaired: true},
		{name: "good after the bad", line: `{"id": "g2", "agent": "bot", "input": "q", "output": "fine"}`, id: "g2", output: "fine"},
	}
	var body []string
	for _, l := range lines {
		body = append(body, l.line)
	}
	stored := map[string]map[string]string{} // backend: id: the run as stored
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		res, err := svc.ImportRuns(ctx, tenant, []byte(strings.Join(body, "\n")), service.ImportOptions{})
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		if res.Stored != len(lines) || res.Rejected != 0 || res.Repaired != 5 {
			t.Fatalf("stored %d rejected %d repaired %d; want %d, 0, 5: %+v", res.Stored, res.Rejected, res.Repaired, len(lines), res.Runs)
		}
		runs := map[string]string{}
		for i, l := range lines {
			t.Run(l.name, func(t *testing.T) {
				ir := res.Runs[i]
				if ir.ID != l.id || ir.Repaired != l.repaired || l.repaired && !strings.Contains(ir.Warning, "U+FFFD") {
					t.Fatalf("import says %+v; want id %q repaired %v, a warning naming U+FFFD", ir, l.id, l.repaired)
				}
				v, err := svc.Run(ctx, tenant, l.id, false)
				if err != nil {
					t.Fatal(err)
				}
				var run sdk.Run
				if err := json.Unmarshal(v.Run, &run); err != nil {
					t.Fatal(err)
				}
				if run.Output != l.output || v.Repaired != l.repaired {
					t.Fatalf("stored output %q repaired %v; want %q, %v", run.Output, v.Repaired, l.output, l.repaired)
				}
				if strings.ContainsRune(string(v.Run), 0) || strings.Contains(string(v.Run), `\u0000`) && l.name != "escaped backslash is text" {
					t.Fatalf("stored run still holds a NUL: %s", v.Run)
				}
				runs[l.id] = fmt.Sprintf("%s %v %v", run.Output, run.Metadata, v.Repaired)
			})
		}
		stored[t.Name()[strings.LastIndex(t.Name(), "/")+1:]] = runs
	})
	if a, b := fmt.Sprint(stored[store.SQLite]), fmt.Sprint(stored[store.Postgres]); a != b {
		t.Fatalf("the backends store different text:\nsqlite   %s\npostgres %s", a, b)
	}
}

// TestImportOneBadLineInHundredThousand: an import of 100,000 lines, one holding a NUL,
// stores all of them, the bad one repaired and named.
func TestImportOneBadLineInHundredThousand(t *testing.T) {
	const n, bad = 100_000, 61_234
	var b strings.Builder
	for i := range n {
		out := fmt.Sprintf("answer %d", i)
		if i == bad {
			out = `answer \u0000 with a NUL`
		}
		fmt.Fprintf(&b, `{"id": "r%06d", "agent": "bot", "input": "q", "output": "%s"}`+"\n", i, out)
	}
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		res, err := svc.ImportRuns(ctx, tenant, []byte(b.String()), service.ImportOptions{})
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		if res.Stored != n || res.Rejected != 0 || res.Repaired != 1 {
			t.Fatalf("stored %d rejected %d repaired %d; want %d, 0, 1", res.Stored, res.Rejected, res.Repaired, n)
		}
		if r := res.Runs[bad]; !r.Repaired || r.Line != bad+1 || r.ID != fmt.Sprintf("r%06d", bad) {
			t.Fatalf("the bad line: %+v; want line %d repaired", r, bad+1)
		}
		if c, err := svc.Run(ctx, tenant, fmt.Sprintf("r%06d", n-1), false); err != nil || c.Repaired {
			t.Fatalf("the last run: %+v, %v", c, err)
		}
	})
}

// TestDuplicateWithOtherContent: a run sent again under the same id is a duplicate either
// way, and the answer says when its content differs from the run stored (or sent
// earlier in the same import), which is kept.
func TestDuplicateWithOtherContent(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		first := `{"id": "a", "agent": "bot", "input": "q", "output": "first", "metadata": {"x": 1, "y": 2}}`
		if res, err := svc.ImportRuns(ctx, tenant, []byte(first), service.ImportOptions{}); err != nil || res.Stored != 1 {
			t.Fatalf("first import: %+v %v", res, err)
		}
		body := strings.Join([]string{
			// The same content, keys in another order and other spacing: the same run.
			`{"metadata": {"y": 2, "x": 1}, "output": "first", "input": "q", "agent": "bot", "id": "a"}`,
			`{"id": "a", "agent": "bot", "input": "q", "output": "second"}`,
			`{"id": "b", "agent": "bot", "input": "q", "output": "one"}`,
			`{"id": "b", "agent": "bot", "input": "q", "output": "two"}`,
			`{"id": "b", "agent": "bot", "input": "q", "output": "one"}`,
		}, "\n")
		res, err := svc.ImportRuns(ctx, tenant, []byte(body), service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			status  string
			differs bool
		}{{service.RunDuplicate, false}, {service.RunDuplicate, true}, {service.RunStored, false}, {service.RunDuplicate, true}, {service.RunDuplicate, false}}
		for i, w := range want {
			r := res.Runs[i]
			if r.Status != w.status || r.ContentDiffers != w.differs || w.differs && !strings.Contains(r.Warning, "other content") {
				t.Errorf("line %d: %+v; want %s, content differs %v, a warning saying so", i+1, r, w.status, w.differs)
			}
		}
		if res.Stored != 1 || res.Duplicates != 4 || res.ContentDiffers != 2 {
			t.Fatalf("stored %d duplicates %d differing %d; want 1, 4, 2", res.Stored, res.Duplicates, res.ContentDiffers)
		}
		v, _ := svc.Run(ctx, tenant, "a", false)
		if !strings.Contains(string(v.Run), "first") {
			t.Fatalf("the stored run changed: %s", v.Run)
		}
	})
}
