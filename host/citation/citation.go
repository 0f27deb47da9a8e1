// Package citation audits the citations in an output deterministically: which markers it
// uses, which ids match no context passage, which claims carry no citation.
package citation

import "github.com/scorekit/scorekit/sdk"

// Audit audits output against the context passages (whose IDs are set).
// It returns ok=false when the output cites nothing and so there is nothing to audit.
func Audit(output string, context []sdk.Passage) (audit sdk.CitationAudit, ok bool) {
	// Placeholder until the auditor lands.
	return sdk.CitationAudit{}, false
}
