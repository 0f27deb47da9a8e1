package noticemodel

import (
	"bytes"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	var m Model
	m.Bias, m.Threshold = -7, 3
	m.Weights[0], m.Weights[Buckets-1], m.Weights[12345] = 127, -128, 5
	got, err := Decode(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if *got != m {
		t.Fatal("decoded model differs from the encoded one")
	}
	if _, err := Decode(m.Encode()[:100]); err == nil {
		t.Fatal("a truncated model decoded without an error")
	}
}

func TestEligible(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want bool
	}{
		{"a sentence", "Der Server ist nicht erreichbar; Versuchen Sie es später erneut", true},
		{"a word or two", "Billing;RefundCancel", false},
		{"CJK without spaces, long enough", "位置情報サービスに接続できません", true},
		{"three lines", "one two three\nfour five six\nseven eight nine", false},
		{"too long", string(bytes.Repeat([]byte("word "), 40)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Eligible(tt.out); got != tt.want {
				t.Errorf("Eligible(%q) = %v, want %v", tt.out, got, tt.want)
			}
		})
	}
}

func TestGramsFoldCaseDigitsAndPunctuation(t *testing.T) {
	collect := func(s string) []uint32 {
		var hs []uint32
		Grams(s, func(h uint32) { hs = append(hs, h) })
		return hs
	}
	a, b := collect("Error 503: Try AGAIN"), collect("error 000 try again")
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d and %d n-grams, want the same non-zero count", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] || a[i] >= Buckets {
			t.Fatalf("n-gram %d: %d and %d", i, a[i], b[i])
		}
	}
}

func TestFiresOnWeightedGrams(t *testing.T) {
	var m Model
	Grams("server unavailable", func(h uint32) { m.Weights[h] = 100 })
	m.Threshold = 20
	if !m.Fires("the server is unavailable right now") {
		t.Error("a text sharing the weighted n-grams does not fire")
	}
	if m.Fires("the weather is lovely in june") {
		t.Error("a text with none of the weighted n-grams fires")
	}
}
