package heuristic

import (
	"context"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Completeness measures how many of the input's terms the output covers, as Mastra's
// completeness scorer does: both texts are reduced to sets of lower-cased, accent-folded
// words with verbs in their base form; an input term of up to 3 characters is covered only by
// the same term, a longer one by an output term that contains it or is contained in it with
// more than 60% of its length. The score is covered / input terms; 1 when both texts have no
// terms, 0 when only the input has none.
//
// Mastra finds verbs with a part-of-speech tagger (compromise). This scorer uses a small
// rule set instead (irregular verbs, regular -ed and -s/-ing forms after a pronoun or an
// auxiliary); BENCHMARKS.md reports how often the two agree.
type Completeness struct{}

var _ sdk.Scorer = (*Completeness)(nil)

// NewCompleteness returns the completeness scorer.
func NewCompleteness() sdk.Scorer { return &Completeness{} }

// Info describes the scorer.
func (*Completeness) Info() sdk.Info {
	return describe("completeness",
		"Share of the input's terms (nouns, verbs in base form, other words) that the output covers; "+
			"short terms must match exactly, longer ones by substantial overlap. Mastra's completeness scorer.",
		0.5, "", "")
}

// Score grades call.Run: coverage of the input's terms in the output.
func (*Completeness) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	in := terms(call.Run.Input)
	out := terms(call.Run.Output)
	score, missing := coverage(in, out)
	if missing == nil {
		missing = []string{} // a JSON list, never null
	}
	res := sdk.Scored(score, completenessReason(len(in), missing))
	res.Steps = []sdk.Step{step("preprocess", map[string]any{
		"input_elements":   len(in),
		"output_elements":  len(out),
		"missing_elements": missing,
	})}
	return res, nil
}

func completenessReason(total int, missing []string) string {
	if total == 0 {
		return "the input has no terms to cover"
	}
	if len(missing) == 0 {
		return fmt.Sprintf("the output covers all %d input terms", total)
	}
	shown := missing
	if len(shown) > 10 {
		shown = shown[:10]
	}
	more := ""
	if len(missing) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
	}
	return fmt.Sprintf("the output covers %d of %d input terms; missing: %s%s",
		total-len(missing), total, strings.Join(shown, ", "), more)
}

// coverage returns the share of in covered by out and the terms of in not covered.
func coverage(in, out []string) (float64, []string) {
	if len(in) == 0 {
		if len(out) == 0 {
			return 1, nil
		}
		return 0, nil
	}
	exact := make(map[string]struct{}, len(out))
	for _, o := range out {
		exact[o] = struct{}{}
	}
	var missing []string
	covered := 0
	for _, e := range in {
		if _, ok := exact[e]; ok {
			covered++
			continue
		}
		if len(e) > 3 && overlaps(e, out) {
			covered++
			continue
		}
		missing = append(missing, e)
	}
	return float64(covered) / float64(len(in)), missing
}

// overlaps reports whether some term in out contains e or is contained in it with more than
// 60% of the longer one's length. Terms are ASCII, so byte lengths are character counts.
func overlaps(e string, out []string) bool {
	for _, s := range out {
		longer, shorter := s, e
		if len(e) > len(s) {
			longer, shorter = e, s
		}
		if float64(len(shorter))/float64(len(longer)) > 0.6 && strings.Contains(longer, shorter) {
			return true
		}
	}
	return false
}

// terms returns the distinct terms of s in order of first appearance: words made of a-z and
// 0-9 after folding accents and case, with verbs in their base form.
func terms(s string) []string {
	words := asciiWords(s)
	seen := make(map[string]struct{}, len(words))
	out := make([]string, 0, len(words))
	add := func(w string) {
		if _, ok := seen[w]; ok || w == "" {
			return
		}
		seen[w] = struct{}{}
		out = append(out, w)
	}
	for i, w := range words {
		prev, next := "", ""
		if i > 0 {
			prev = words[i-1]
		}
		if i+1 < len(words) {
			next = words[i+1]
		}
		if auxiliary[w] != "" && looksInflected(next) {
			continue // "was studying" -> "study": the tagger folds the auxiliary into the verb
		}
		add(baseForm(w, prev))
	}
	return out
}

// asciiWords lower-cases s, folds accents and splits it on every character outside a-z, 0-9.
func asciiWords(s string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		r = foldAccent(r)
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			continue
		}
		flush()
	}
	flush()
	return words
}

// auxiliary maps forms of be, have and do to their base form.
var auxiliary = map[string]string{
	"is": "be", "are": "be", "was": "be", "were": "be", "am": "be", "been": "be", "being": "be",
	"has": "have", "had": "have", "having": "have",
	"does": "do", "did": "do",
}

// irregular maps common irregular past forms to the base form.
var irregular = map[string]string{
	"went": "go", "gone": "go", "said": "say", "made": "make", "took": "take", "taken": "take",
	"came": "come", "saw": "see", "seen": "see", "knew": "know", "known": "know", "got": "get",
	"gave": "give", "given": "give", "found": "find", "thought": "think", "told": "tell",
	"became": "become", "left": "leave", "felt": "feel", "brought": "bring", "began": "begin",
	"begun": "begin", "kept": "keep", "held": "hold", "wrote": "write", "written": "write",
	"stood": "stand", "heard": "hear", "meant": "mean", "met": "meet", "ran": "run",
	"paid": "pay", "sat": "sit", "spoke": "speak", "spoken": "speak", "led": "lead",
	"grew": "grow", "grown": "grow", "lost": "lose", "fell": "fall", "fallen": "fall",
	"sent": "send", "built": "build", "understood": "understand", "drew": "draw",
	"drawn": "draw", "broke": "break", "broken": "break", "spent": "spend", "won": "win",
	"taught": "teach", "bought": "buy", "caught": "catch", "fought": "fight", "chose": "choose",
	"chosen": "choose", "wore": "wear", "worn": "wear", "drove": "drive", "driven": "drive",
	"ate": "eat", "eaten": "eat", "flew": "fly", "flown": "fly", "sold": "sell", "sang": "sing",
	"sung": "sing", "swam": "swim", "threw": "throw", "thrown": "throw", "rose": "rise",
	"risen": "rise", "shot": "shoot", "struck": "strike", "sought": "seek", "slept": "sleep",
	"forgot": "forget", "forgotten": "forget", "hid": "hide", "hidden": "hide", "bit": "bite",
	"invented": "invent", "killed": "kill",
}

var pronoun = map[string]bool{
	"he": true, "she": true, "it": true, "who": true, "that": true, "which": true, "this": true,
	"i": true, "you": true, "we": true, "they": true,
}

// looksInflected reports whether w looks like an -ed or -ing verb form or an irregular
// past form.
func looksInflected(w string) bool {
	if irregular[w] != "" {
		return true
	}
	return len(w) > 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing"))
}

// baseForm returns the base form of w when w is recognisably a verb form, else w.
func baseForm(w, prev string) string {
	if b := auxiliary[w]; b != "" {
		return b
	}
	if b := irregular[w]; b != "" {
		return b
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return stripSuffix(w, "ed")
	case len(w) > 5 && strings.HasSuffix(w, "ing") && (auxiliary[prev] != "" || pronoun[prev]):
		return stripSuffix(w, "ing")
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && pronoun[prev] && prev != "i" && prev != "you" && prev != "we" && prev != "they":
		if strings.HasSuffix(w, "ies") {
			return w[:len(w)-3] + "y"
		}
		if strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses") {
			return w[:len(w)-2]
		}
		return w[:len(w)-1]
	}
	return w
}

// stripSuffix removes an -ed or -ing suffix with the usual spelling rules: "stopped" ->
// "stop", "studied" -> "study", "used" -> "use", "making" -> "make".
func stripSuffix(w, suffix string) string {
	stem := w[:len(w)-len(suffix)]
	if suffix == "ed" && strings.HasSuffix(stem, "i") {
		return stem[:len(stem)-1] + "y"
	}
	n := len(stem)
	if n >= 2 && stem[n-1] == stem[n-2] && !strings.ContainsRune("aeiouls", rune(stem[n-1])) {
		return stem[:n-1]
	}
	if n >= 2 && isConsonant(stem[n-1]) && isVowel(stem[n-2]) && (n < 3 || isConsonant(stem[n-3])) && !strings.ContainsRune("wxy", rune(stem[n-1])) && n <= 4 {
		return stem + "e" // "used" -> "use", "made" handled above; short stems only
	}
	if strings.HasSuffix(stem, "at") || strings.HasSuffix(stem, "iz") || strings.HasSuffix(stem, "uc") || strings.HasSuffix(stem, "rv") || strings.HasSuffix(stem, "lv") {
		return stem + "e"
	}
	return stem
}

func isVowel(c byte) bool     { return strings.IndexByte("aeiou", c) >= 0 }
func isConsonant(c byte) bool { return c >= 'a' && c <= 'z' && !isVowel(c) }
