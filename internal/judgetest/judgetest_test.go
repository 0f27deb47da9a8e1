package judgetest

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"time"
)

func post(t *testing.T, url string, body any) (*http.Response, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp, out
}

func chat(prompt string) map[string]any {
	return map[string]any{"model": "m", "messages": []map[string]string{{"role": "system", "content": "sys"}, {"role": "user", "content": prompt}}}
}

func TestRules(t *testing.T) {
	s := New(
		Rule{Match: "flaky", Status: 429, RetryAfter: "2", Times: 1},
		Rule{Match: "flaky", Reply: "recovered"},
		Rule{Match: "cut", Reply: `{"score": 0.`, FinishReason: "length"},
		Rule{Reply: "default answer"},
	)
	defer s.Close()
	tests := []struct {
		name       string
		prompt     string
		wantStatus int
		wantReply  string
		wantFinish string
		wantRetry  string
	}{
		{"fault first", "a flaky one", 429, "", "", "2"},
		{"then the next rule", "a flaky one", 200, "recovered", "stop", ""},
		{"truncation", "cut short", 200, `{"score": 0.`, "length", ""},
		{"catch-all", "anything else", 200, "default answer", "stop", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := post(t, s.URL()+"/chat/completions", chat(tt.prompt))
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Retry-After") != tt.wantRetry {
				t.Fatalf("status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			if tt.wantStatus != 200 {
				return
			}
			choice := out["choices"].([]any)[0].(map[string]any)
			if got := choice["message"].(map[string]any)["content"]; got != tt.wantReply || choice["finish_reason"] != tt.wantFinish {
				t.Fatalf("reply %q finish %v", got, choice["finish_reason"])
			}
			usage := out["usage"].(map[string]any)
			if usage["prompt_tokens"].(float64) != float64(Words("sys")+Words(tt.prompt)) {
				t.Fatalf("usage = %v", usage)
			}
		})
	}
	if s.Calls() != 4 || s.Requests()[0].LastUser() != "a flaky one" || s.Requests()[0].Model != "m" {
		t.Fatalf("recorded %d requests: %+v", s.Calls(), s.Requests())
	}
}

func TestNoRuleIsABadRequest(t *testing.T) {
	s := New(Rule{Match: "only this", Reply: "x"})
	defer s.Close()
	resp, out := post(t, s.RootURL()+"/chat/completions", chat("something else"))
	if resp.StatusCode != 400 || out["error"] == nil {
		t.Fatalf("status %d body %v", resp.StatusCode, out)
	}
}

func TestDelayEndsWhenTheClientLeaves(t *testing.T) {
	s := New(Rule{Reply: "late", Delay: time.Hour})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	b, _ := json.Marshal(chat("q"))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", bytes.NewReader(b))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a one-hour delay answered")
	}
	s.Close() // returns only once the handler has returned
}

func TestEmbeddings(t *testing.T) {
	s := New()
	defer s.Close()
	_, out := post(t, s.URL()+"/embeddings", map[string]any{"model": "e", "input": []string{"Paris is the capital", "capital of Paris", "zebra"}})
	data := out["data"].([]any)
	vec := func(i int) []float64 {
		var v []float64
		for _, x := range data[i].(map[string]any)["embedding"].([]any) {
			v = append(v, x.(float64))
		}
		return v
	}
	cos := func(a, b []float64) float64 {
		var d float64
		for i := range a {
			d += a[i] * b[i]
		}
		return d
	}
	if len(vec(0)) != Dimensions || math.Abs(cos(vec(0), vec(0))-1) > 1e-6 {
		t.Fatalf("vectors are not unit length")
	}
	if same, other := cos(vec(0), vec(1)), cos(vec(0), vec(2)); same <= other || same < 0.5 {
		t.Fatalf("shared words should be closer: %v vs %v", same, other)
	}
	if zero := Embed(""); cos(toF(zero), toF(zero)) != 0 {
		t.Fatal("empty text should embed to zero")
	}
}

func toF(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func TestKeyAndModels(t *testing.T) {
	s := New(Rule{Reply: "ok"})
	defer s.Close()
	do := func(method, path, key string, body any) int {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, s.URL()+path, rd)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do("GET", "/models", "", nil); got != 404 {
		t.Fatalf("models list before ListModels: %d, want 404", got)
	}
	s.RequireKey("sk-right")
	s.ListModels("m", "other")
	for _, tt := range []struct {
		name, method, path, key string
		body                    any
		want                    int
	}{
		{"models with the key", "GET", "/models", "sk-right", nil, 200},
		{"models without the key", "GET", "/models", "", nil, 401},
		{"chat with a wrong key", "POST", "/chat/completions", "sk-wrong", chat("q"), 401},
		{"chat with the key and a listed model", "POST", "/chat/completions", "sk-right", chat("q"), 200},
		{"chat with an unlisted model", "POST", "/chat/completions", "sk-right", map[string]any{"model": "nope", "messages": []map[string]string{{"role": "user", "content": "q"}}}, 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := do(tt.method, tt.path, tt.key, tt.body); got != tt.want {
				t.Fatalf("status %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRawAndSizedAnswers(t *testing.T) {
	s := New(Rule{Match: "raw", Raw: "<html>not an API</html>"}, Rule{Match: "big", Size: 3 << 20})
	defer s.Close()
	b, _ := json.Marshal(chat("raw"))
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || body.String() != "<html>not an API</html>" {
		t.Fatalf("raw answer: %d %q", resp.StatusCode, body.String())
	}
	resp, out := post(t, s.URL()+"/chat/completions", chat("big"))
	content := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	if resp.StatusCode != 200 || len(content) != 3<<20 || s.BytesWritten() != 3<<20 {
		t.Fatalf("sized answer: status %d, %d bytes of content, %d written", resp.StatusCode, len(content), s.BytesWritten())
	}
}
