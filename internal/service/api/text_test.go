package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestRunsWithBadText: POST /v1/runs with a good run and one holding text PostgreSQL
// refuses (a NUL, invalid UTF-8, a lone surrogate) stores both on either backend, the
// bad one repaired and named in the answer and in the run read back.
func TestRunsWithBadText(t *testing.T) {
	bad := map[string]string{
		"NUL":            `"out\u0000put"`,
		"invalid UTF-8":  "\"out\xffput\"",
		"lone surrogate": `"out\ud800put"`,
	}
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "a")
		c := h.as(t, "a")
		for name, output := range bad {
			t.Run(name, func(t *testing.T) {
				id := strings.ReplaceAll(name, " ", "-")
				body := `[{"id": "good-` + id + `", "agent": "bot", "input": "q", "output": "fine"},` +
					`{"id": "bad-` + id + `", "agent": "bot", "input": "q", "output": ` + output + `}]`
				r := c.do("POST", "/v1/runs", []byte(body))
				var res service.ImportResult
				r.json(t, &res)
				if r.status != 200 || res.Stored != 2 || res.Repaired != 1 || !res.Runs[1].Repaired || res.Runs[0].Repaired {
					t.Fatalf("%d %s; want both stored, the second repaired", r.status, r.body)
				}
				var v service.RunView
				g := c.do("GET", "/v1/runs/bad-"+id, nil)
				g.json(t, &v)
				var run sdk.Run
				_ = json.Unmarshal(v.Run, &run)
				if g.status != 200 || !v.Repaired || run.Output != "out\uFFFDput" {
					t.Fatalf("%d %s; want the run repaired with U+FFFD", g.status, g.body)
				}
				if g := c.do("GET", "/v1/runs/good-"+id, nil); g.status != 200 {
					t.Fatalf("the good run: %d %s", g.status, g.body)
				}
			})
		}
	})
}
