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
