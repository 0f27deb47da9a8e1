package prescreen

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scorekit/scorekit/sdk"
)

// The reasons quote a clipped piece of the run. A clip that cut a character in half
// showed it as \x escapes ("\xe6\x97") in a reason a person reads.
func TestReasonsQuoteWholeCharacters(t *testing.T) {
	cjk := strings.Repeat("日本語のテキスト", 20) // 3 bytes a character: 40 and 80 fall inside one
	reasons := map[string]string{
		"tool failure": toolFailureDetail(&sdk.Run{ToolCalls: []sdk.ToolCall{{Name: "search", Result: `{"error":"` + cjk + `"}`}}}),
	}
	loop, ok := findBlockLoop(&screenText{out: strings.Repeat(cjk+"\n\n", 3)})
	if !ok {
		t.Fatal("findBlockLoop found no block in a text written three times")
	}
	reasons["loop"] = loop
	for name, r := range reasons {
		if strings.Contains(r, `\x`) {
			t.Errorf("%s: reason %s shows a character cut in half", name, r)
		}
		if !utf8.ValidString(r) {
			t.Errorf("%s: reason %q is not valid UTF-8", name, r)
		}
	}
}
