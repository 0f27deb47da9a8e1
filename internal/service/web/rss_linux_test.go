package web_test

import (
	"fmt"
	"github.com/scorekit/scorekit/internal/testkit"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The memory bound of the deep run's pages: serving the run page and the review page of
// the dashboard's repro (a run whose metadata holds two chains of 9,000 nested arrays)
// grows the server's resident memory by at most pageRSSMiB. Before the pages were bounded
// it grew by 2.3 GB, and the pages were 326 MB.
const (
	pageRSSMiB   = 64
	pageRSSChild = "SCOREKIT_WEB_RSS_CHILD"
)

// TestDeepRunPageRSS measures a child process (this test binary, re-run) that holds the
// service and serves the pages, so the figure is the server's whole resident memory: the
// peak (VmHWM, reset once the run is stored) less the resident memory before the requests.
func TestDeepRunPageRSS(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeepRunPageRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), pageRSSChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var base, peak, after, run, review int
	for line := range strings.Lines(string(out)) {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "rss base=%d peak=%d after=%d run=%d review=%d", &base, &peak, &after, &run, &review); err == nil {
			break
		}
	}
	if base == 0 || peak == 0 {
		t.Fatalf("child printed no rss line:\n%s", out)
	}
	grew := (peak - base) >> 10
	t.Logf("server RSS %d MiB before the pages, peak %d MiB (+%d MiB), %d MiB after; run page %d bytes, review page %d bytes",
		base>>10, peak>>10, grew, after>>10, run, review)
	if grew > pageRSSMiB {
		t.Errorf("serving the pages grew the server's RSS by %d MiB, over %d MiB", grew, pageRSSMiB)
	}
	if run > maxTestPage || review > maxTestPage {
		t.Errorf("pages of %d and %d bytes, over %d", run, review, maxTestPage)
	}
}

// TestDeepRunPageRSSChild is the child of TestDeepRunPageRSS; run alone it does nothing.
func TestDeepRunPageRSSChild(t *testing.T) {
	if os.Getenv(pageRSSChild) == "" {
		return
	}
	s := newDeepRunService(t, filepath.Join(t.TempDir(), "scorekit.db"))
	get := func(path string) int {
		resp, err := http.Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, _ := io.Copy(io.Discard, resp.Body) // the client keeps none of it
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return int(n)
	}
	get("/insights") // the first request's own costs (a connection, a session of the store) are not the pages'
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	base := testkit.ProcStatus(t, "VmRSS")
	run := get("/runs/deep")
	review := get("/review/prescreen?labeller=ann&run=deep")
	fmt.Printf("rss base=%d peak=%d after=%d run=%d review=%d\n", base, testkit.ProcStatus(t, "VmHWM"), testkit.ProcStatus(t, "VmRSS"), run, review)
}
