// Package citation audits the citations in an output deterministically: which markers it
// uses, which ids match no context passage, which claims carry no citation, and which
// citations point at a passage that cannot support the sentence that cites it.
//
// # Markers
//
// "[1]", "[1, 3]", "[1][3]", "[2-4]" (at most 50 ids), "[doc-3]", "[chunk_ab12]",
// "[Source 2]", "【3】" and "【3†source】", footnotes "[^1]" (resolved through their
// "[^1]: ..." definition), HTML "<sup>1</sup>", and Unicode superscripts ("tall¹") after a
// word of three or more letters or closing punctuation (after a digit, a single letter or a
// two-letter unit they are exponents: 10², x³, km²). Bracket contents that do not read as
// ids are text: "[sic]", "[x]", "[0, 1]" (an interval: ids are 1-based), "[1.5]",
// "[see chapter 3]", "[1990-2000]". Markers inside code are ignored.
//
// # Ids
//
// A cited id matches a passage by exact id, then case-insensitively, then after stripping a
// prefix word ("Source 2", "doc-2" and "2" are the same id) when that is unambiguous, then,
// when no passage has a numeric id, "[N]" is the N-th passage (the agent saw a numbered
// list). Passages without an id are numbered by position, as [sdk.Run.NumberContext] does.
//
// # Sentences and claims
//
// Fenced code is dropped; list items, table rows and headings are units of their own; a
// period ends a sentence only before white space and a non-lower-case letter, and not
// after a title ("Dr."), an initial ("J."), a dotted acronym ("U.S."), or "No."/"Jan."
// before a number. Markers right after the end ("tall. [1]") belong to the sentence before.
// A sentence is a claim (it needs a citation) unless it is a question, a heading, a line
// ending in ':', a greeting, a courtesy ("Let me know ..."), a transition ("Here is a
// summary."), an "I don't know", a line under a "Sources" heading, or has too little content
// (fewer than two content words, or one without a number or a citation).
//
// # Support tests
//
// A sentence is cut into segments at its marker groups, so in "330 m tall [1] and completed
// in 1889 [2]" each marker answers for its own clause; a segment without content ("According
// to [1],") passes its markers on to the next. A citation is unsupported when:
//
//  1. the cited passages hold none of the segment's specific facts while another passage
//     holds one: facts are numbers and names (capitalized words that do not open the
//     sentence, acronyms), less those every passage holds (the topic: "Eiffel Tower" in
//     every passage tells none apart). "None" rather than "one missing", so a sentence that
//     adds an incidental name ("in Paris") to a supported fact is not flagged;
//  2. the cited passages hold at most a third of the segment's content words (six-letter
//     truncation stems) while another passage holds at least two thirds and two more;
//  3. the cited passage shares no content word and no number with its segment (at least
//     three terms).
//
// Tests 1 and 2 need a better passage to point at: a number or a name found nowhere in the
// context is not called unsupported (it may be derived: a sum, a conversion), so they find
// citations to the wrong passage, not every fabrication; that is the judge's part. The
// false-positive risks are a segment whose only specific facts come from an uncited passage
// while its cited passage holds the rest (a partial attribution, reported on purpose), a
// paraphrase that shares no word with its passage (test 3; hence the three-term minimum),
// and a name or number written in two forms ("US" and "United States", "1.5 million" and
// "1,500,000").
//
// # When there is nothing to audit
//
// [Audit] returns ok=false only when the output has no marker and there is no context.
// With context and no marker it still audits: for a retrieval-augmented answer every
// uncited claim is a real finding, and the host's clamps on uncited sentences rely on it.
package citation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Sentence is one sentence of an output as the auditor sees it.
type Sentence struct {
	// Text is the sentence with its markers removed.
	Text string
	// Claim is true when the sentence states something that needs a citation.
	Claim bool
	// Cites are the ids its markers cite, as written (footnotes by their label).
	Cites []string
}

// Audit audits output against the context passages (passages without an ID are numbered
// by their 1-based position). It returns ok=false when the output has no citation marker
// and there is no context: there is nothing to audit.
func Audit(output string, context []sdk.Passage) (audit sdk.CitationAudit, ok bool) {
	d := parse(output, context)
	if d.refs == 0 && len(context) == 0 {
		return sdk.CitationAudit{}, false
	}
	audit.Citations = d.refs
	invalid := map[string]bool{}
	unsup := map[string]bool{}
	for _, s := range d.sents {
		var cited []int
		for _, m := range s.markers {
			for _, r := range m.refs {
				idx, ok := d.res.resolve(r, d.defs)
				if !ok {
					if !invalid[r.raw] {
						invalid[r.raw] = true
						audit.InvalidCitations = append(audit.InvalidCitations, r.raw)
					}
					continue
				}
				cited = append(cited, idx...)
			}
		}
		if !s.claim {
			continue
		}
		audit.Sentences++
		if len(s.markers) == 0 {
			audit.UncitedSentences++
			continue
		}
		for _, f := range d.check(s) {
			if !unsup[f] {
				unsup[f] = true
				audit.UnsupportedCitations = append(audit.UnsupportedCitations, f)
			}
		}
	}
	audit.HallucinationDetected = len(audit.InvalidCitations) > 0 || len(audit.UnsupportedCitations) > 0
	return audit, true
}

// Sentences splits output into sentences as [Audit] sees them, with the ids each cites.
// context tells which bracket contents are passage ids.
func Sentences(output string, context []sdk.Passage) []Sentence {
	d := parse(output, context)
	out := make([]Sentence, 0, len(d.sents))
	for _, s := range d.sents {
		var cites []string
		for _, m := range s.markers {
			for _, r := range m.refs {
				cites = append(cites, r.raw)
			}
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(s.text, string(sentinel), " ")), " ")
		out = append(out, Sentence{Text: spaceBeforePunct.ReplaceAllString(text, "$1"), Claim: s.claim, Cites: cites})
	}
	return out
}

var spaceBeforePunct = regexp.MustCompile(`\s+([.,;:!?)])`)

// sentence is a parsed sentence: text with sentinels, and its markers in order.
type sentence struct {
	text    string
	claim   bool
	markers []marker
}

// doc is a parsed output.
type doc struct {
	sents []sentence
	refs  int
	defs  map[string]string
	res   *resolver
	post  *postings // built on the first cited claim
}

func parse(output string, context []sdk.Passage) *doc {
	res := newResolver(context)
	sc := &scanner{known: res.known}
	units, defs := blocks(output)
	d := &doc{defs: defs, res: res}
	inRefs := false
	for _, u := range units {
		clean, ms := sc.scan(u.text)
		k := u.kind
		if k == kindParagraph && u.lines == 1 && looksLikeHeading(clean) {
			k = kindHeading
		}
		if k == kindHeading {
			inRefs = refHeading.MatchString(strings.ToLower(strings.Trim(strings.TrimSpace(clean), "*_ ")))
		} else if inRefs {
			k = kindReference
		}
		parts := []string{clean}
		if k != kindHeading {
			parts = splitSentences(clean)
		}
		next := 0
		for _, p := range parts {
			n := strings.Count(p, string(sentinel))
			s := sentence{text: p, markers: ms[next:min(next+n, len(ms))]}
			next += n
			for _, m := range s.markers {
				d.refs += len(m.refs)
			}
			if k == kindParagraph || k == kindItem {
				s.claim = isClaim(strings.ReplaceAll(p, string(sentinel), " "), n > 0)
			}
			d.sents = append(d.sents, s)
		}
	}
	return d
}

// check runs the support tests on a cited claim and returns "id: reason" findings.
func (d *doc) check(s sentence) []string {
	if d.post == nil {
		d.post = newPostings(d.res.passages)
	}
	var out []string
	for _, g := range segments(s) {
		var cited []int
		for _, r := range g.refs {
			if idx, ok := d.res.resolve(r, d.defs); ok {
				cited = append(cited, idx...)
			}
		}
		if len(cited) == 0 {
			continue
		}
		t := extract(g.text, g.first)
		if why := unsupported(t, cited, d.post, d.res.ids); why != "" {
			for _, i := range uniq(cited) {
				out = append(out, d.res.ids[i]+": "+why)
			}
			continue
		}
		for _, i := range uniq(cited) {
			if disjoint(t, d.post, i) {
				out = append(out, fmt.Sprintf("%s: passage %s shares no content word with %q", d.res.ids[i], d.res.ids[i], clip(g.text)))
			}
		}
	}
	return out
}

// segment is the text a group of markers answers for.
type segment struct {
	text  string
	refs  []ref
	first bool // the segment opens the sentence
}

// segments cuts a sentence at its marker groups (markers separated only by spaces, commas
// or semicolons form one group). Text after the last group joins the last segment; a
// segment without content words passes its refs on to the next one.
func segments(s sentence) []segment {
	var out []segment
	var text, piece strings.Builder
	var pending []ref
	mi := 0
	rs := []rune(s.text)
	first := true
	for i := 0; i < len(rs); i++ {
		if rs[i] != sentinel {
			text.WriteRune(rs[i])
			piece.WriteRune(rs[i])
			continue
		}
		var refs []ref
		for i < len(rs) && (rs[i] == sentinel || rs[i] == ' ' || rs[i] == ',' || rs[i] == ';') {
			if rs[i] == sentinel && mi < len(s.markers) {
				refs = append(refs, s.markers[mi].refs...)
				mi++
			}
			i++
		}
		i--
		refs = append(append([]ref(nil), pending...), refs...)
		// Only the text since the last group is new: words never span a marker.
		content := hasContent(piece.String())
		piece.Reset()
		if !content {
			pending = refs
			continue
		}
		out = append(out, segment{text: text.String(), refs: refs, first: first})
		first = false
		pending = nil
		text.Reset()
	}
	rest := text.String()
	switch {
	case len(pending) > 0:
		out = append(out, segment{text: rest, refs: pending, first: first})
	case len(out) > 0 && strings.TrimSpace(rest) != "":
		out[len(out)-1].text += rest
	}
	return out
}

// resolver matches cited ids to passages.
type resolver struct {
	passages   []sdk.Passage
	ids        []string
	exact      map[string]int
	lower      map[string]int
	norm       map[string][]int
	known      map[string]bool
	feet       map[string][]int // resolved footnote labels
	positional bool
}

func newResolver(context []sdk.Passage) *resolver {
	r := &resolver{exact: map[string]int{}, lower: map[string]int{}, norm: map[string][]int{}, known: map[string]bool{}, feet: map[string][]int{}, positional: true}
	for i, p := range context {
		id := p.ID
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		r.passages = append(r.passages, p)
		r.ids = append(r.ids, id)
		if _, dup := r.exact[id]; !dup {
			r.exact[id] = i
		}
		low := strings.ToLower(id)
		if _, dup := r.lower[low]; !dup {
			r.lower[low] = i
		}
		n := normalizeID(low)
		r.norm[n] = append(r.norm[n], i)
		r.known[low] = true
		r.known[n] = true
		if allDigits.MatchString(n) {
			r.positional = false
		}
	}
	return r
}

// resolve returns the passages a ref cites, or ok=false when it cites none that exists.
func (r *resolver) resolve(x ref, defs map[string]string) ([]int, bool) {
	if x.foot {
		if got, ok := r.feet[x.raw]; ok {
			return got, len(got) > 0
		}
		got, _ := r.footnote(x.raw, defs)
		r.feet[x.raw] = got
		return got, len(got) > 0
	}
	if i, ok := r.one(x.raw); ok {
		return []int{i}, true
	}
	return nil, false
}

func (r *resolver) one(raw string) (int, bool) {
	if i, ok := r.exact[raw]; ok {
		return i, true
	}
	low := strings.ToLower(strings.TrimSpace(raw))
	if i, ok := r.lower[low]; ok {
		return i, true
	}
	n := normalizeID(low)
	if idx := r.norm[n]; len(idx) == 1 {
		return idx[0], true
	}
	if r.positional && allDigits.MatchString(n) {
		if k, err := strconv.Atoi(n); err == nil && k >= 1 && k <= len(r.passages) {
			return k - 1, true
		}
	}
	return 0, false
}

// footnote resolves a footnote label: through the markers or prefixed ids in its
// definition, else through the passage its definition quotes (two thirds of its content
// words), else by the label itself as an id.
func (r *resolver) footnote(label string, defs map[string]string) ([]int, bool) {
	def, ok := defs[label]
	if ok {
		sc := &scanner{known: r.known}
		_, ms := sc.scan(def)
		var out []int
		for _, m := range ms {
			for _, x := range m.refs {
				if x.foot {
					continue
				}
				if i, ok := r.one(x.raw); ok {
					out = append(out, i)
				}
			}
		}
		if len(out) == 0 {
			for _, w := range strings.Fields(def) {
				w = strings.Trim(w, ".,;:()\"'")
				if normalizeID(w) != strings.ToLower(w) || r.known[strings.ToLower(w)] {
					if i, ok := r.one(w); ok {
						out = append(out, i)
					}
				}
			}
		}
		if len(out) == 0 {
			out = r.quoted(def)
		}
		if len(out) > 0 {
			return uniq(out), true
		}
	}
	if i, ok := r.one(label); ok {
		return []int{i}, true
	}
	return nil, false
}

// quoted returns the passage whose words a footnote definition reproduces, if any.
func (r *resolver) quoted(def string) []int {
	t := extract(def, true)
	if len(t.stems) < minTermsForOverlap {
		return nil
	}
	best, bestN := -1, 0
	for i, p := range r.passages {
		b := passageBag(p.Text)
		n := 0
		for _, s := range t.stems {
			if b.stems[s] {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best >= 0 && float64(bestN) >= highCoverage*float64(len(t.stems)) {
		return []int{best}
	}
	return nil
}

func uniq(xs []int) []int {
	seen := map[int]bool{}
	out := xs[:0:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func clip(s string) string {
	s = spaceBeforePunct.ReplaceAllString(strings.Join(strings.Fields(s), " "), "$1")
	if rs := []rune(s); len(rs) > 60 {
		return string(rs[:57]) + "..."
	}
	return s
}
