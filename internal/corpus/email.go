package corpus

import (
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

type emailCase struct {
	Name  string `json:"name"`
	Email struct {
		Author  string `json:"author"`
		To      string `json:"to"`
		Subject string `json:"subject"`
		Thread  string `json:"email_thread"`
	} `json:"email_input"`
	Triage    string   `json:"triage_label"`
	Criteria  string   `json:"response_criteria"`
	ToolCalls []string `json:"expected_tool_calls"`
}

// emailPurpose is what the triage agent is for; a judge reads it from metadata.
const emailPurpose = "Read each incoming email, decide respond / notify / ignore, and post a Slack triage summary with action items."

func loadEmail(dir string) ([]Case, error) {
	const rel = "langchain_email/email_dataset.json"
	var d struct {
		Cases []emailCase `json:"cases"`
	}
	if err := readJSON(dir, rel, &d); err != nil {
		return nil, err
	}
	out := make([]Case, 0, len(d.Cases))
	for _, c := range d.Cases {
		out = append(out, Case{Source: "email_triage", Label: LabelTriage, WantPass: true, Run: sdk.Run{
			ID:       "email_triage/" + c.Name,
			Agent:    "email-triage",
			Input:    RawEmail(c.Email.Author, c.Email.To, c.Email.Subject, c.Email.Thread),
			Output:   slackTriage(c),
			Metadata: map[string]any{"purpose": emailPurpose},
		}})
	}
	return out, nil
}

// RawEmail formats an email as an agent receives it: headers, a blank line, the body.
func RawEmail(from, to, subject, body string) string {
	return "From: " + from + "\nTo: " + to + "\nSubject: " + subject + "\n\n" + body
}

// slackTriage builds the Slack message a correct triage agent posts for c, from the gold
// label and response criteria: an emoji and the decision, sender and subject, a one-line
// summary (the body's first sentence after the greeting), the action items, the tools.
func slackTriage(c emailCase) string {
	emoji := map[string]string{"respond": ":envelope_with_arrow:", "notify": ":bell:", "ignore": ":wastebasket:"}[c.Triage]
	sender := c.Email.Author
	if i := strings.Index(sender, " <"); i > 0 {
		sender = sender[:i]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s *Triage: %s*\n", emoji, strings.ToUpper(c.Triage))
	fmt.Fprintf(&b, "*From:* %s  |  *Subject:* %s\n", sender, c.Email.Subject)
	fmt.Fprintf(&b, "*Summary:* %s\n", firstSentence(c.Email.Thread))
	b.WriteString("*Action items:*\n")
	for _, line := range strings.Split(c.Criteria, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "•"))
		if line != "" {
			fmt.Fprintf(&b, "• %s\n", line)
		}
	}
	if len(c.ToolCalls) > 0 {
		b.WriteString("*Tools:* `" + strings.Join(c.ToolCalls, "`, `") + "`\n")
	}
	return strings.TrimSpace(b.String())
}

func firstSentence(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		// Skip the greeting line ("Hi Lance,") and blank lines.
		if l == "" || (i == 0 && strings.HasSuffix(l, ",")) {
			continue
		}
		if j := strings.IndexAny(l, ".?!"); j > 0 {
			return l[:j+1]
		}
		return l
	}
	return strings.TrimSpace(body)
}
