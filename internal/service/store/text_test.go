package store

import (
	"encoding/json"
	"testing"
)

func TestCleanJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "clean text is untouched", in: `{"a": "b \u00e9 \ud83d\ude00 \\u0000"}`, want: `{"a": "b \u00e9 \ud83d\ude00 \\u0000"}`},
		{name: "NUL escape", in: `{"a": "x\u0000y"}`, want: `{"a": "x\ufffdy"}`},
		{name: "NUL escape in a key", in: `{"\u0000": 1}`, want: `{"\ufffd": 1}`},
		{name: "lone high surrogate", in: `["\ud800x"]`, want: `["\ufffdx"]`},
		{name: "lone high surrogate at the end", in: `["\uD800"]`, want: `["\ufffd"]`},
		{name: "lone low surrogate", in: `["\udc00"]`, want: `["\ufffd"]`},
		{name: "two highs", in: `["\ud800\ud800\udc00"]`, want: `["\ufffd\ud800\udc00"]`},
		{name: "invalid UTF-8", in: "[\"a\xffb\xe2\x82\"]", want: "[\"a\uFFFDb\uFFFD\uFFFD\"]"},
		{name: "a raw NUL byte", in: "[\"a\x00\"]", want: "[\"a\uFFFD\"]"},
		{name: "escaped quote keeps the string open", in: `["\"\u0000"]`, want: `["\"\ufffd"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := CleanJSON([]byte(tt.in))
			if string(got) != tt.want || changed != (tt.in != tt.want) {
				t.Fatalf("CleanJSON(%q) = %q, %v; want %q", tt.in, got, changed, tt.want)
			}
			if again, changed := CleanJSON(got); changed || string(again) != tt.want {
				t.Fatalf("CleanJSON is not idempotent: %q", again)
			}
			// The repaired JSON decodes to text with U+FFFD where Go's own decoder would put it.
			var v any
			if json.Valid([]byte(tt.in)) && json.Unmarshal(got, &v) != nil {
				t.Fatalf("the repaired JSON does not decode: %q", got)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           "plain",
		"a\x00b":          "a\uFFFDb",
		"a\xc3":           "a\uFFFD",
		"\xed\xa0\x80 x":  "\uFFFD\uFFFD\uFFFD x", // a surrogate in UTF-8 is invalid, byte by byte
		"\uFFFD is valid": "\uFFFD is valid",
	} {
		if got, changed := CleanText(in); got != want || changed != (in != want) {
			t.Errorf("CleanText(%q) = %q, %v; want %q", in, got, changed, want)
		}
	}
}
