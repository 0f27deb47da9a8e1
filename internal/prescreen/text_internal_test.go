package prescreen

import (
	"strings"
	"testing"
)

func TestFoldLower(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ascii lower unchanged", "paris", "paris"},
		{"ascii upper", "What Is IT?", "what is it?"},
		{"typographic apostrophe", "Don\u2019t", "don't"},
		{"non-ASCII letters", "\u00c4RGER \u00c9t\u00e9", "\u00e4rger \u00e9t\u00e9"},
		{"emoji kept", ":bell: \U0001F514 OK", ":bell: \U0001F514 ok"},
		{"invalid byte kept", "A\xffB", "a\xffb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := foldLower(tt.in)
			if got != tt.want {
				t.Errorf("foldLower(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if ref := strings.ReplaceAll(strings.ToLower(strings.ReplaceAll(tt.in, "\u2019", "'")), "\ufffd", "\xff"); ref != got && !strings.Contains(tt.in, "\xff") {
				t.Errorf("foldLower(%q) = %q, strings.ToLower gives %q", tt.in, got, ref)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"punctuation", "Hello, world!", []string{"Hello", "world"}},
		{"inner apostrophe", "don't stop'", []string{"don't", "stop"}},
		{"digits and unicode", "P1 caf\u00e9 2024", []string{"P1", "caf\u00e9", "2024"}},
		{"empty", "  ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitWords(tt.in)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("splitWords(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
