package seed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/sdk"
)

// base is one email the triage agent handles, with its gold triage: a langchain_email email
// (decision and action items from the data set's label and response criteria, as corpus
// renders them) or a ragas support ticket sent to the support address (labels and priority
// from the data set).
type base struct {
	source            string
	from, to, subject string
	body              string
	decision          string // respond, notify or ignore
	priority          string // P0 (urgent) to P3 (low)
	labels            []string
	summary           string
	actions           []string
	tools             []string
	// slack is corpus's own Slack triage of the email; empty for tickets.
	slack string
}

// triageBases returns the 16 emails and 20 support tickets, in corpus order.
func triageBases(cases []corpus.Case) ([]base, error) {
	var out []base
	tickets := map[string]*base{}
	var order []string
	for _, c := range cases {
		switch c.Source {
		case "email_triage":
			b, err := emailBase(c.Run)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		case "ragas_triage":
			// Two runs per ticket: ragas_triage/{id}/labels and .../priority.
			parts := strings.Split(c.Run.ID, "/")
			if len(parts) != 3 {
				return nil, fmt.Errorf("seed: corpus run %s: want ragas_triage/{id}/{labels|priority}", c.Run.ID)
			}
			t := tickets[parts[1]]
			if t == nil {
				t = &base{source: "ragas/support_triage/" + parts[1], body: c.Run.Input}
				tickets[parts[1]] = t
				order = append(order, parts[1])
			}
			switch parts[2] {
			case "labels":
				t.labels = strings.Split(c.Run.Output, ";")
			case "priority":
				t.priority = c.Run.Output
			}
		}
	}
	if len(out) == 0 || len(order) == 0 {
		return nil, errors.New("seed: the corpus has no email_triage or ragas_triage cases; check that testdata/ holds langchain_email and ragas")
	}
	for i, id := range order {
		t := tickets[id]
		if len(t.labels) == 0 || t.priority == "" {
			return nil, fmt.Errorf("seed: support ticket %s lacks its labels or priority run in the corpus", id)
		}
		out = append(out, ticketBase(i, *t))
	}
	return out, nil
}

// emailBase reads a corpus email run: the raw email corpus.RawEmail formatted, and the Slack
// triage corpus built from the gold label and response criteria.
func emailBase(r sdk.Run) (base, error) {
	b := base{source: "langchain_email/" + strings.TrimPrefix(r.ID, "email_triage/"), slack: r.Output}
	head, body, ok := strings.Cut(r.Input, "\n\n")
	if !ok {
		return b, fmt.Errorf("seed: corpus run %s: input is not a raw email (headers, blank line, body)", r.ID)
	}
	b.body = body
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "From":
			b.from = v
		case "To":
			b.to = v
		case "Subject":
			b.subject = v
		}
	}
	inActions := false
	for _, line := range strings.Split(r.Output, "\n") {
		switch {
		case strings.Contains(line, "*Triage: "):
			d := line[strings.Index(line, "*Triage: ")+len("*Triage: "):]
			b.decision = strings.ToLower(strings.TrimSuffix(d, "*"))
		case strings.HasPrefix(line, "*Summary:* "):
			b.summary = strings.TrimPrefix(line, "*Summary:* ")
		case strings.HasPrefix(line, "*Action items:*"):
			inActions = true
		case inActions && strings.HasPrefix(line, "• "):
			b.actions = append(b.actions, strings.TrimPrefix(line, "• "))
		case strings.HasPrefix(line, "*Tools:* "):
			inActions = false
			for _, t := range strings.Split(strings.TrimPrefix(line, "*Tools:* "), ", ") {
				b.tools = append(b.tools, strings.Trim(t, "`"))
			}
		}
	}
	if b.from == "" || b.subject == "" || b.decision == "" || b.summary == "" || len(b.actions) == 0 {
		return b, fmt.Errorf("seed: corpus run %s: could not read sender, subject, decision, summary and action items from its input and output; the corpus email format changed, update emailBase", r.ID)
	}
	b.priority = emailPriority(b)
	return b, nil
}

// emailPriority gives an email the priority a person would: replies that involve a meeting
// or a deadline first, then other replies and alerts, newsletters last.
func emailPriority(b base) string {
	subject := strings.ToLower(b.subject)
	switch b.decision {
	case "respond":
		for _, t := range b.tools {
			if t == "schedule_meeting" || t == "check_calendar_availability" {
				return "P1"
			}
		}
		text := strings.ToLower(b.body + " " + strings.Join(b.actions, " "))
		if strings.Contains(text, "deadline") || strings.Contains(text, "friday") {
			return "P1"
		}
		return "P2"
	case "notify":
		if strings.Contains(subject, "alert") || strings.Contains(subject, "maintenance") || strings.Contains(subject, "downtime") {
			return "P1"
		}
		return "P2"
	default:
		return "P3"
	}
}

// customers send the support tickets.
var customers = []string{
	"Dana Kim", "Luis Ortega", "Mei Tanaka", "Sam Okafor", "Ana Ribeiro", "Tom Becker",
	"Priya Nair", "Jonas Berg", "Chloe Martin", "Omar Haddad",
}

// labelActions is what support does for each ticket label.
var labelActions = map[string]string{
	"Billing":      "Check the account's billing history",
	"RefundCancel": "Reverse the duplicate charge or confirm the cancellation in writing",
	"Account":      "Verify the account owner and fix the sign-in or ownership problem",
	"ProductIssue": "Reproduce the problem and file a bug with the customer's steps",
	"HowTo":        "Reply with the help-centre steps",
	"Feature":      "Log the feature request and thank the customer",
}

// slaHours is the reply deadline per priority.
var slaHours = map[string]string{"P0": "1 hour", "P1": "4 hours", "P2": "1 business day", "P3": "when convenient"}

// ticketBase turns the i-th support ticket into an email to the support address.
func ticketBase(i int, t base) base {
	name := customers[i%len(customers)]
	first, last, _ := strings.Cut(name, " ")
	text := t.body
	t.from = fmt.Sprintf("%s <%s.%s@%s>", name, strings.ToLower(first), strings.ToLower(last), []string{"gmail.com", "outlook.com", "acme.io", "northwind.example"}[i%4])
	t.to = "Support <support@company.com>"
	t.subject = clipWords(firstSentence(text), 8)
	t.body = "Hi support,\n\n" + text + "\n\nThanks,\n" + first
	t.decision = "respond"
	t.summary = firstSentence(text)
	if t.priority == "P0" {
		t.actions = append(t.actions, "Page the on-call engineer: the customer is blocked")
	}
	for _, l := range t.labels {
		if a, ok := labelActions[l]; ok {
			t.actions = append(t.actions, a)
		}
	}
	t.actions = append(t.actions, "Reply to the customer within "+slaHours[t.priority])
	t.tools = []string{"write_email", "done"}
	return t
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ".?!"); i > 0 {
		return s[:i+1]
	}
	return s
}

func clipWords(s string, n int) string {
	w := strings.Fields(strings.TrimRight(s, ".?!"))
	if len(w) <= n {
		return strings.Join(w, " ")
	}
	return strings.Join(w[:n], " ") + "..."
}

// variant is one way a base reaches the agent and one way the agent posts its triage.
type variant struct {
	base      base
	forwarded bool
	format    int
}

// pickVariants returns n variants drawn without replacement from every combination of base,
// input form (as received or forwarded) and output format.
func pickVariants(rng *rand.Rand, bases []base, n int) []variant {
	var all []variant
	for _, b := range bases {
		for _, fwd := range []bool{false, true} {
			for f := range formats {
				if f == formatCorpus && b.slack == "" {
					continue
				}
				all = append(all, variant{base: b, forwarded: fwd, format: f})
			}
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for len(all) < n {
		all = append(all, all...)
	}
	return all[:n]
}

func triageRun(n int, t time.Time, v variant) sdk.Run {
	return sdk.Run{
		ID:       runID(AgentEmailTriage, n),
		Agent:    AgentEmailTriage,
		Input:    v.base.input(v.forwarded),
		Output:   v.output(),
		Time:     at(t),
		Metadata: map[string]any{"purpose": EmailTriagePurpose, "source": v.base.source},
	}
}

// output is the agent's Slack post; a forwarded email's post says who forwarded it.
func (v variant) output() string {
	out := formats[v.format](v.base)
	switch {
	case !v.forwarded:
		return out
	case strings.Contains(out, "\n"):
		return out + "\n_Forwarded by Priya Shah._"
	default:
		return out + " (fwd by Priya Shah)"
	}
}

// input is the raw email the agent receives: as sent, or forwarded by a colleague.
func (b base) input(forwarded bool) string {
	raw := corpus.RawEmail(b.from, b.to, b.subject, b.body)
	if !forwarded {
		return raw
	}
	return corpus.RawEmail("Priya Shah <priya.shah@company.com>", "Triage <triage@company.com>", "Fwd: "+b.subject,
		"Can you triage this one?\n\n---------- Forwarded message ---------\n"+raw)
}

func (b base) sender() string {
	if i := strings.Index(b.from, " <"); i > 0 {
		return b.from[:i]
	}
	return b.from
}

var (
	decisionEmoji = map[string]string{"respond": ":envelope_with_arrow:", "notify": ":bell:", "ignore": ":wastebasket:"}
	priorityWord  = map[string]string{"P0": "urgent", "P1": "high", "P2": "normal", "P3": "low"}
)

const formatCorpus = 0

// formats are the Slack messages the agent posts, from corpus's own layout to a one-liner.
var formats = []func(base) string{
	formatCorpus: func(b base) string { return b.slack },
	// A one-liner: decision, priority, who, what, the first thing to do.
	func(b base) string {
		return fmt.Sprintf("%s *%s* (%s) %s: %s → %s", decisionEmoji[b.decision], strings.ToUpper(b.decision), b.priority,
			b.sender(), b.subject, lowerFirst(b.actions[0]))
	},
	// Fields: decision and priority, subject and sender, the summary, labels, next step.
	func(b base) string {
		var s strings.Builder
		fmt.Fprintf(&s, "%s *%s* | priority *%s*\n", decisionEmoji[b.decision], titleCase(b.decision), b.priority)
		fmt.Fprintf(&s, "*%s* (from %s)\n%s\n", b.subject, b.sender(), b.summary)
		if len(b.labels) > 0 {
			fmt.Fprintf(&s, "Labels: `%s`\n", strings.Join(b.labels, "` `"))
		}
		fmt.Fprintf(&s, "Next: %s", b.actions[0])
		return s.String()
	},
	// A bulleted triage record.
	func(b base) string {
		var s strings.Builder
		s.WriteString("*Email triage*\n")
		fmt.Fprintf(&s, "• Decision: %s\n• Priority: %s (%s)\n• From: %s\n• Subject: %s\n", b.decision, b.priority, priorityWord[b.priority], b.from, b.subject)
		if len(b.labels) > 0 {
			fmt.Fprintf(&s, "• Labels: %s\n", strings.Join(b.labels, ", "))
		}
		fmt.Fprintf(&s, "• Summary: %s\n• To do: %s", b.summary, strings.Join(b.actions, "; "))
		return s.String()
	},
	// A long post: the email quoted, numbered action items, the tools.
	func(b base) string {
		var s strings.Builder
		fmt.Fprintf(&s, "%s New email (*%s*) from *%s*, priority %s (%s)\n", decisionEmoji[b.decision], b.decision, b.sender(), b.priority, priorityWord[b.priority])
		quoted := 0
		for _, line := range strings.Split(b.body, "\n") {
			if line = strings.TrimSpace(line); line != "" && quoted < 4 {
				fmt.Fprintf(&s, "> %s\n", line)
				quoted++
			}
		}
		fmt.Fprintf(&s, "*What it is:* %s\n*Action items:*\n", b.summary)
		for i, a := range b.actions {
			fmt.Fprintf(&s, "%d. %s\n", i+1, a)
		}
		if len(b.tools) > 0 {
			fmt.Fprintf(&s, "*Tools:* `%s`\n", strings.Join(b.tools, "`, `"))
		}
		s.WriteString("_Reply in this thread to change the decision._")
		return s.String()
	},
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
