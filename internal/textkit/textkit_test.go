package textkit

import (
	"strings"
	"testing"
	"unicode"
)

func TestCollapseSpace(t *testing.T) {
	ref := func(s string) string {
		var b strings.Builder
		space := false
		for _, r := range s {
			if unicode.IsSpace(r) {
				space = true
				continue
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
		return b.String()
	}
	texts := []string{"", "a", " ", "  a  b\t\tc\n", "\u00a0x\u0085y\u2003", "\xff \xfe", "ÀÉÎ straße \xff\xfe INVALID",
		"hello World, it\u2019s Über", strings.Repeat("Mixed Case Text ", 9) + "ENDÉ", "\ttabs\rand\vvertical\fspace "}
	for _, s := range texts {
		if got, want := CollapseSpace(s), ref(s); got != want {
			t.Errorf("CollapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {512, "512 bytes"}, {1023, "1023 bytes"}, {1024, "1 KiB"}, {3584, "3.5 KiB"},
		{32 << 10, "32 KiB"}, {1 << 20, "1 MiB"}, {3 << 19, "1.5 MiB"}, {8 << 20, "8 MiB"}, {(1 << 20) - 1, "1024.0 KiB"},
	} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestPrefixAndClip(t *testing.T) {
	for _, c := range []struct {
		s      string
		n      int
		prefix string
		clip   string
	}{
		{"", 3, "", ""},
		{"abc", 3, "abc", "abc"},
		{"abcd", 3, "abc", "abc..."},
		{"日本語", 9, "日本語", "日本語"},
		{"日本語", 8, "日本", "日本..."}, // a cut inside 語 goes back to its start
		{"日本語", 4, "日", "日..."},
		{"日本語", 2, "", "..."},
		{"a日", 0, "", "..."},
	} {
		if got := Prefix(c.s, c.n); got != c.prefix {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.prefix)
		}
		if got := Clip(c.s, c.n); got != c.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.clip)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"  a\n\tb  ", 10, "a b"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"日本語のテキスト", 4, "日本語…"},
	} {
		if got := OneLine(c.s, c.n); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
