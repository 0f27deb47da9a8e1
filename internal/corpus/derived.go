package corpus

import (
	"fmt"
	"strings"
)

// Derived sets turn real correct outputs of the public sets into broken ones in one
// documented way each, so a failure class that no public set labels is still measured on
// real text: the placeholder leaks, the truncated runs and the loops. Every derived case
// names the case it was made from in Derived.

// placeholderSlots are unfilled slots in the template syntaxes agents are built with:
// Python str.format and LangChain prompts, Mustache/Handlebars/Jinja, JavaScript template
// literals and shells, ERB, Ruby interpolation, .NET composite formatting, printf, tag-style
// and bracketed stand-ins, and serialized nulls.
var placeholderSlots = []string{
	"{answer}", "{{answer}}", "{{ answer }}", "${answer}", "<ANSWER>", "[INSERT ANSWER]", "%s", "#{answer}",
	"<%= answer %>", "{0}", "[ANSWER]", "{{{answer}}}", "%(answer)s", "[Your answer here]", "{{ output.text }}", "${result}",
}

// wholeNulls are nulls that stand for the whole answer.
var wholeNulls = []string{"None", "null", "undefined", "NaN", "[object Object]"}

// derive builds the derived sets from the loaded cases.
func derive(cases []Case) []Case {
	var out []Case
	byID := func(src string) []Case {
		var cs []Case
		for _, c := range cases {
			if c.Source == src && c.Label == LabelCorrect {
				cs = append(cs, c)
			}
		}
		return cs
	}
	// Placeholders: short answers replaced by a slot, alone or in a sentence; solutions whose
	// final answer is a slot; instruction outputs with a slot in their first line.
	k := 0
	slot := func() string { s := placeholderSlots[k%len(placeholderSlots)]; k++; return s }
	for i, c := range byID("nq_open") {
		d := c
		d.Source, d.Label, d.WantPass, d.Derived = "placeholders_derived", LabelPlaceholder, false, c.Run.ID
		switch i % 4 {
		case 0:
			d.Run.Output = slot()
		case 1:
			d.Run.Output = "The answer is " + slot() + "."
		case 2:
			d.Run.Output = wholeNulls[(i/4)%len(wholeNulls)]
		case 3:
			d.Run.Output = "Answer: " + slot()
		}
		d.Run.ID = "placeholders_derived/" + c.Run.ID
		out = append(out, d)
	}
	for _, c := range byID("gsm8k") {
		if c.Kind != KindMath {
			continue
		}
		i := strings.LastIndex(c.Run.Output, "####")
		if i < 0 {
			continue
		}
		d := c
		d.Source, d.Label, d.WantPass, d.Derived = "placeholders_derived", LabelPlaceholder, false, c.Run.ID
		d.Run.Output = c.Run.Output[:i] + "#### " + slot()
		d.Run.ID = "placeholders_derived/" + c.Run.ID
		out = append(out, d)
	}
	for _, c := range byID("alpaca_eval") {
		first, rest, _ := strings.Cut(c.Run.Output, "\n")
		ws := strings.Fields(first)
		for j, w := range ws {
			if j >= 3 && len(strings.Trim(w, ".,:;!?\"")) >= 7 {
				ws[j] = slot()
				break
			}
		}
		d := c
		d.Source, d.Label, d.WantPass, d.Derived = "placeholders_derived", LabelPlaceholder, false, c.Run.ID
		d.Run.Output = strings.Join(ws, " ") + "\n" + rest
		d.Run.ID = "placeholders_derived/" + c.Run.ID
		out = append(out, d)
	}

	// Truncation: long correct outputs cut mid-way at a word boundary, once with the stop
	// reason the caller's provider reports and once without any signal.
	signals := []map[string]any{{"finish_reason": "length"}, {"stop_reason": "max_tokens"}, {"finishReason": "MAX_TOKENS"}}
	n := 0
	for _, c := range cases {
		if c.Label != LabelCorrect || (c.Source != "alpaca_eval" && c.Source != "gsm8k" && c.Source != "xstest" && c.Source != "ares") {
			continue
		}
		ws := strings.Fields(c.Run.Output)
		if len(ws) < 40 || (c.Source == "xstest" && n >= 150) {
			continue
		}
		n++
		cut := strings.Join(ws[:len(ws)*3/5], " ")
		for _, signal := range []bool{true, false} {
			d := c
			d.Label, d.WantPass, d.Derived = LabelTruncated, false, c.Run.ID
			d.Run.Output = cut
			d.Run.Metadata = nil
			if signal {
				d.Source = "truncated_signal"
				d.Run.Metadata = signals[n%len(signals)]
			} else {
				d.Source = "truncated_nosignal"
			}
			d.Run.ID = d.Source + "/" + c.Run.ID
			out = append(out, d)
		}
	}

	// Loops: a correct output whose last sentence repeats, or whose last word stutters, as a
	// model stuck in a loop writes it.
	m := 0
	for _, c := range cases {
		if c.Label != LabelCorrect || (c.Source != "alpaca_eval" && c.Source != "xstest") || m >= 40 {
			continue
		}
		ws := strings.Fields(c.Run.Output)
		if len(ws) < 30 {
			continue
		}
		m++
		d := c
		d.Source, d.Label, d.WantPass, d.Derived = "repetition_derived", LabelRepetition, false, c.Run.ID
		if m%2 == 0 {
			tail := strings.Join(ws[len(ws)-12:], " ")
			d.Run.Output = c.Run.Output + strings.Repeat("\n"+tail, 5)
		} else {
			last := ws[len(ws)-1]
			d.Run.Output = c.Run.Output + strings.Repeat(" "+strings.Trim(last, ".!?"), 8)
		}
		d.Run.ID = fmt.Sprintf("repetition_derived/%s", c.Run.ID)
		out = append(out, d)
	}
	return append(out, wholeLoops(cases)...)
}

// loopAnswerSources are the sources whose correct answers answer_loops repeats: every source
// of whole answers but the ones the project is checked on elsewhere (AlpacaEval, NQ-open,
// GSM8K) and code, which code_loops repeats.
var loopAnswerSources = []string{"truthfulqa", "ares", "xstest", "dolly", "mt_bench", "gnome_help", "germanquad",
	"tydiqa", "squad_es", "jaquad", "python_faq", "debian_faq"}

// wholeLoops builds the third pass's held-out loops (issue 32): a model stuck in a loop
// writes the same block again, back to back, whatever the block holds. code_loops repeats
// each complete function of go_stdlib and python_stdlib two or three times: inside its fence,
// or the whole fenced answer with its lead-in, or the raw code, after a blank line or a line
// break. answer_loops repeats whole correct answers of loopAnswerSources (every fourth answer
// of eight words or 30 characters or more, at most 30 a source) two or three times, after a
// blank line, a line break or a space. Frozen before the loop rules of the third pass were
// written; QUALITY.md reports them per source.
func wholeLoops(cases []Case) []Case {
	var out []Case
	loop := func(c Case, source, output string) {
		d := c
		d.Source, d.Label, d.WantPass, d.Kind, d.Derived = source, LabelRepetition, false, "", c.Run.ID
		d.Run.Output = output
		d.Run.ID = source + "/" + c.Run.ID
		out = append(out, d)
	}
	repeat := func(block, sep string, copies int) string {
		return strings.TrimSpace(strings.Repeat(block+sep, copies-1) + block)
	}
	seps := [...]string{"\n\n", "\n", " "}
	i := 0
	for _, c := range cases {
		if c.Label != LabelCorrect || c.Source != "go_stdlib" && c.Source != "python_stdlib" {
			continue
		}
		copies := 2 + (i/2)%2
		sep := seps[(i/4)%2]
		out0 := c.Run.Output
		if open := strings.Index(out0, "```"); open >= 0 {
			lead, fenced := out0[:open], out0[open:]
			nl := strings.IndexByte(fenced, '\n')
			code := strings.TrimSuffix(fenced[nl+1:], "```")
			if (i/4)%2 == 0 {
				// The function again inside the fence.
				loop(c, "code_loops", lead+fenced[:nl+1]+repeat(strings.TrimRight(code, "\n"), "\n\n", copies)+"\n```")
			} else {
				// The whole answer again, lead-in and fence.
				loop(c, "code_loops", repeat(out0, "\n\n", copies))
			}
		} else {
			loop(c, "code_loops", repeat(out0, sep, copies))
		}
		i++
	}
	for _, src := range loopAnswerSources {
		k, n := 0, 0
		for _, c := range cases {
			if c.Source != src || c.Label != LabelCorrect || n >= 30 {
				continue
			}
			out0 := strings.TrimSpace(c.Run.Output)
			if len(strings.Fields(out0)) < 8 && len([]rune(out0)) < 30 {
				continue
			}
			k++
			if k%4 != 1 {
				continue
			}
			loop(c, "answer_loops", repeat(out0, seps[n%3], 2+n%2))
			n++
		}
	}
	return out
}
