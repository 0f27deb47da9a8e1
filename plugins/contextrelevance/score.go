package contextrelevance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// levelWeight is the weight of each relevance level: Mastra's.
var levelWeight = map[string]float64{"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0}

// rating is one passage's verdict in the mastra method, as the result's steps show it.
type rating struct {
	ID        string `json:"id"`
	Relevance string `json:"relevance"`
	Used      bool   `json:"used"`
	Reason    string `json:"reason,omitempty"`
}

// penalties are the mastra method's three penalties.
type penalties struct {
	unusedHigh, missingPerItem, maxMissing float64
}

// breakdown is how the mastra method's score came about.
type breakdown struct {
	Base           float64 `json:"base"`
	UnusedHigh     int     `json:"unused_high"`
	UnusedPenalty  float64 `json:"unused_penalty"`
	Missing        int     `json:"missing"`
	MissingPenalty float64 `json:"missing_penalty"`
	Score          float64 `json:"score"`
}

// mastraScore is Mastra's formula over rated passages: max(0, mean level weight - the
// unused-high penalty - the capped missing penalty). usage false leaves the unused-high
// penalty out (there was no answer to use the passages). rs is never empty: every run
// passage is rated.
func mastraScore(rs []rating, missing int, p penalties, usage bool) breakdown {
	var sum float64
	var b breakdown
	for _, r := range rs {
		sum += levelWeight[r.Relevance]
		if r.Relevance == "high" && !r.Used {
			b.UnusedHigh++
		}
	}
	b.Base = sum / float64(len(rs))
	if usage {
		b.UnusedPenalty = float64(b.UnusedHigh) * p.unusedHigh
	} else {
		b.UnusedHigh = 0
	}
	b.Missing = missing
	b.MissingPenalty = min(float64(missing)*p.missingPerItem, p.maxMissing)
	b.Score = max(0, b.Base-b.UnusedPenalty-b.MissingPenalty)
	return b
}

// mastraAnswer is the judge's answer in the mastra method, read loosely and then checked.
type mastraAnswer struct {
	Passages []mastraRating `json:"passages"`
	Missing  []string       `json:"missing"`
}

// mastraRating is one passage's rating in the mastra method, as the judge gives it.
type mastraRating struct {
	ID        string `json:"id"`
	Relevance string `json:"relevance"`
	Used      any    `json:"used"`
	Reason    string `json:"reason"`
}

// mastra runs the mastra method: one call, the score from the ratings, the reason composed.
func mastra(ctx context.Context, cfg Config, j sdk.Judge, run *sdk.Run, ps []sdk.Passage, noAnswer, why string) sdk.Result {
	var ans mastraAnswer
	ex, order, err := ask(ctx, j, prompt(mastraInstructions, mastraFormat, run, ps, true), compact(mastraSchema), ps, &ans)
	if err != nil {
		return ex.Fail(Name, err)
	}
	rs := make([]rating, len(ps))
	for i, p := range ans.Passages {
		level := strings.ToLower(strings.TrimSpace(p.Relevance))
		if _, ok := levelWeight[level]; !ok {
			return ex.Fail(Name, fmt.Errorf("passage %s: relevance %q: want high, medium, low or none", ps[order[i]].ID, p.Relevance))
		}
		used, ok := readBool(p.Used)
		if !ok {
			return ex.Fail(Name, fmt.Errorf("passage %s: used %v: want true or false", ps[order[i]].ID, p.Used))
		}
		rs[order[i]] = rating{ID: ps[order[i]].ID, Relevance: level, Used: used && noAnswer == "", Reason: strings.TrimSpace(p.Reason)}
	}
	var missing []string
	for _, m := range ans.Missing {
		if m = strings.TrimSpace(m); m != "" {
			missing = append(missing, m)
		}
	}
	ex.Parsed = map[string]any{"passages": rs, "missing": missing}
	p := penalties{cfg.UnusedHighRelevancePenalty, cfg.MissingContextPenalty, cfg.MaxMissingContextPenalty}
	b := mastraScore(rs, len(missing), p, noAnswer == "")
	reason := mastraReason(rs, missing, b)
	if noAnswer != "" {
		reason += "; " + why + ", so the passages' use was not judged"
	}
	return scored(ex, b.Score, reason, noAnswer, map[string]any{"method": MethodMastra, "weights": levelWeight, "penalties": map[string]float64{
		"unused_high_relevance": p.unusedHigh, "missing_context": p.missingPerItem, "max_missing_context": p.maxMissing,
	}, "breakdown": b})
}

// mastraReason tells the score from the ratings: the levels, the unused high-relevance
// passages and the missing information, each with what it cost.
func mastraReason(rs []rating, missing []string, b breakdown) string {
	count := map[string][]string{}
	for _, r := range rs {
		count[r.Relevance] = append(count[r.Relevance], r.ID)
	}
	var levels []string
	for _, l := range []string{"high", "medium", "low", "none"} {
		if ids := count[l]; len(ids) > 0 {
			levels = append(levels, fmt.Sprintf("%s %s", l, idList(ids)))
		}
	}
	reason := fmt.Sprintf("%d passages rated: %s (mean relevance %.2f)", len(rs), strings.Join(levels, ", "), b.Base)
	if b.UnusedHigh > 0 {
		var unused []string
		for _, r := range rs {
			if r.Relevance == "high" && !r.Used {
				unused = append(unused, r.ID)
			}
		}
		reason += fmt.Sprintf("; high-relevance but unused: %s (-%.2f)", idList(unused), b.UnusedPenalty)
	}
	if len(missing) > 0 {
		reason += fmt.Sprintf("; missing: %s (-%.2f)", quoteList(missing), b.MissingPenalty)
	}
	return reason + fmt.Sprintf("; score %.2f", b.Score)
}

// statementVerdict is one statement of a passage in the deepeval method.
type statementVerdict struct {
	Statement string `json:"statement"`
	Relevant  bool   `json:"relevant"`
}

// deepEvalAnswer is the judge's answer in the deepeval method.
type deepEvalAnswer struct {
	Passages []deepEvalPassage `json:"passages"`
}

// deepEvalPassage is one passage's statements in the deepeval method, as the judge gives
// them.
type deepEvalPassage struct {
	ID         string `json:"id"`
	Statements []struct {
		Statement string `json:"statement"`
		Relevant  any    `json:"relevant"`
	} `json:"statements"`
}

// deepEval runs DeepEval's method in one call: relevant statements / all statements.
func deepEval(ctx context.Context, j sdk.Judge, run *sdk.Run, ps []sdk.Passage, noAnswer string) sdk.Result {
	var ans deepEvalAnswer
	ex, order, err := ask(ctx, j, prompt(deepEvalInstructions, deepEvalFormat, run, ps, false), compact(deepEvalSchema), ps, &ans)
	if err != nil {
		return ex.Fail(Name, err)
	}
	type passageStatements struct {
		ID         string             `json:"id"`
		Statements []statementVerdict `json:"statements"`
		Relevant   int                `json:"relevant"`
	}
	per := make([]passageStatements, len(ps))
	relevant, total := 0, 0
	var irrelevant []string
	for i, p := range ans.Passages {
		k := order[i]
		per[k].ID = ps[k].ID
		for _, st := range p.Statements {
			text := strings.TrimSpace(st.Statement)
			if text == "" {
				continue
			}
			rel, ok := readBool(st.Relevant)
			if !ok {
				return ex.Fail(Name, fmt.Errorf("passage %s: statement %q: relevant %v: want true or false", ps[k].ID, text, st.Relevant))
			}
			per[k].Statements = append(per[k].Statements, statementVerdict{text, rel})
			total++
			if rel {
				relevant++
				per[k].Relevant++
			}
		}
		if len(per[k].Statements) > 0 && per[k].Relevant == 0 {
			irrelevant = append(irrelevant, ps[k].ID)
		}
	}
	ex.Parsed = map[string]any{"passages": per}
	if total == 0 {
		return ex.Fail(Name, errors.New("the judge split the passages into no statements, and every passage has text; nothing to score"))
	}
	score := float64(relevant) / float64(total)
	reason := fmt.Sprintf("%d of %d statements in %d passages relevant to the input", relevant, total, len(ps))
	if len(irrelevant) > 0 {
		reason += "; no relevant statement in " + idList(irrelevant)
	}
	return scored(ex, score, reason, noAnswer, map[string]any{"method": MethodDeepEval, "relevant": relevant, "statements": total, "score": score})
}

// rated is a judge's answer that rates passages by id, in the order it gives them.
type rated interface{ ids() []string }

func (a *mastraAnswer) ids() []string   { return ids(a.Passages) }
func (a *deepEvalAnswer) ids() []string { return ids(a.Passages) }

func (r mastraRating) id() string    { return r.ID }
func (p deepEvalPassage) id() string { return p.ID }

// ids are the ids of the passages an answer rates, in its order.
func ids[P interface{ id() string }](ps []P) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.id()
	}
	return out
}

// ask makes the scorer's one judge call, reads its answer into ans, and maps each passage
// the answer rates to the index of its run passage in ps ([matchIDs]).
func ask(ctx context.Context, j sdk.Judge, user string, schema json.RawMessage, ps []sdk.Passage, ans rated) (*judgekit.Exchange, []int, error) {
	ex, content, err := judgekit.Ask(ctx, j, system, user, schema)
	if err != nil {
		return ex, nil, err
	}
	if err := verdict.Extract(content, ans); err != nil {
		return ex, nil, err
	}
	order, err := matchIDs(ps, ans.ids())
	return ex, order, err
}

// scored is the scored result with the judge step, the score step and the flag, if any.
func scored(ex *judgekit.Exchange, score float64, reason, flag string, step any) sdk.Result {
	res := ex.Scored(score, reason, step)
	if flag != "" {
		res.Flags = []string{flag}
	}
	return res
}

// matchIDs maps each answered id to the index of its run passage. Every passage must be
// answered exactly once: a missing, unknown or repeated id is an error naming them.
func matchIDs(ps []sdk.Passage, got []string) ([]int, error) {
	index := make(map[string]int, len(ps))
	for i, p := range ps {
		index[p.ID] = i
	}
	seen := make([]bool, len(ps))
	order := make([]int, len(got))
	var unknown, repeated []string
	for i, id := range got {
		k, ok := index[normalizeID(id)]
		if !ok {
			// Ids compare as written, else without regard to case.
			for pid, pk := range index {
				if strings.EqualFold(pid, normalizeID(id)) {
					k, ok = pk, true
					break
				}
			}
		}
		switch {
		case !ok:
			unknown = append(unknown, id)
		case seen[k]:
			repeated = append(repeated, ps[k].ID)
		default:
			seen[k] = true
			order[i] = k
		}
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, ps[i].ID)
		}
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "no verdict for "+idList(missing))
	}
	if len(unknown) > 0 {
		problems = append(problems, "verdicts for ids the run does not have: "+quoteList(unknown))
	}
	if len(repeated) > 0 {
		problems = append(problems, "more than one verdict for "+idList(repeated))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the judge must rate every passage once by its id: %s", strings.Join(problems, "; "))
	}
	return order, nil
}

// normalizeID reads an id as judges write it: "2", " [2] ".
func normalizeID(id string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(id), "[]"))
}

// readBool reads a flag as judges write it: true/false, "yes"/"no", 1/0.
func readBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case float64:
		if x == 0 || x == 1 {
			return x == 1, true
		}
	case string:
		return judgekit.YesNo(x)
	}
	return false, false
}

// idList names passages: "passage 2" or "passages 1, 3".
func idList(ids []string) string {
	if len(ids) == 1 {
		return "passage " + ids[0]
	}
	return "passages " + strings.Join(ids, ", ")
}

// quoteList quotes items for a reason.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
