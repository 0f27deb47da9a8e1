package api_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestBearerScheme: the authentication scheme is case-insensitive (RFC 9110, section
// 11.1), the key is not.
func TestBearerScheme(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true}, "a")
	key := h.keys["a"]
	for _, tt := range []struct {
		name, header string
		status       int
	}{
		{"allowed: Bearer", "Bearer " + key, 200},
		{"allowed: bearer", "bearer " + key, 200},
		{"allowed: BEARER and spaces", "BEARER   " + key, 200},
		{"denied: Basic", "Basic " + key, 401},
		{"denied: the key in other case", "Bearer " + swapCase(key), 401},
		{"denied: no key", "Bearer", 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", h.srv.URL+"/v1/agents", nil)
			req.Header.Set("Authorization", tt.header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("Authorization %q: %d, want %d", tt.header, resp.StatusCode, tt.status)
			}
		})
	}
}

func swapCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
		case c >= 'A' && c <= 'Z':
			b[i] = c + 32
		}
	}
	return string(b)
}
