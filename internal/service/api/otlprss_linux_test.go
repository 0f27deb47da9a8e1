package api_test

import (
	"fmt"
	"github.com/scorekit/scorekit/internal/testkit"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/otlpcheck/otlpchecktest"
)

// The resident memory a serve may grow by while it refuses otlpRSSRequests requests of
// an attribute nested 700,000 deep in OTLP JSON (45 KB gzipped, 19.6 MB once
// decompressed), one after another. Each was decoded before: 3 cost +506 MiB. Now each
// costs its decompressed body until the collector takes it: 3 cost +56 MiB.
const (
	otlpRSSRequests = 3
	otlpRSSBoundMiB = 96
	otlpRSSChildEnv = "SCOREKIT_OTLP_RSS_CHILD"
)

// TestOTLPNestedRSS measures a child process (this test binary, re-run) serving the
// requests, so the figure is the server's whole resident memory: its peak (VmHWM, reset
// before the requests) less its resident memory then.
func TestOTLPNestedRSS(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestOTLPNestedRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), otlpRSSChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var base, peak int
	for line := range strings.Lines(string(out)) {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "rss base=%d peak=%d", &base, &peak); err == nil {
			break
		}
	}
	if base == 0 || peak == 0 {
		t.Fatalf("child printed no rss line:\n%s", out)
	}
	grew := (peak - base) >> 10 // MiB
	t.Logf("RSS before the requests %d MiB, peak %d MiB: +%d MiB for %d nested JSON requests (bound +%d MiB)",
		base>>10, peak>>10, grew, otlpRSSRequests, otlpRSSBoundMiB)
	if grew > otlpRSSBoundMiB {
		t.Errorf("serve's RSS grew by %d MiB refusing %d requests, over %d MiB", grew, otlpRSSRequests, otlpRSSBoundMiB)
	}
}

// TestOTLPNestedRSSChild is the child of TestOTLPNestedRSS; run alone it does nothing.
func TestOTLPNestedRSSChild(t *testing.T) {
	if os.Getenv(otlpRSSChildEnv) == "" {
		return
	}
	_, h, key := boundServer(t, filepath.Join(t.TempDir(), "scorekit.db"), api.Options{})
	body := gzipped(t, otlpchecktest.NestedJSON(700_000))
	if r := postTraces(t, h.srv.URL, key, "application/x-protobuf", "", emptyRequest); r.status != http.StatusOK {
		t.Fatalf("a first request: %d %s", r.status, r.body)
	}
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	base := testkit.ProcStatus(t, "VmRSS")
	for range otlpRSSRequests {
		r := postTraces(t, h.srv.URL, key, "application/json", "gzip", body)
		t.Logf("%d bytes gzipped: %d %.200s", len(body), r.status, r.body)
	}
	fmt.Printf("rss base=%d peak=%d\n", base, testkit.ProcStatus(t, "VmHWM"))
}
