package heuristic

// The scorers below return promptly once their context is done: their cost is bounded
// (alignBudget, overlapBudget, listPairs) and their long loops look at the context, and
// linear passes look between them. ObservesContext tells a host (host.ContextObserver) that
// it may call them on the caller's goroutine without a watchdog.

// ObservesContext reports true: see the package's cost limits.
func (*Completeness) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*ContentSimilarity) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*KeywordCoverage) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*TextualDifference) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*Tone) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*ExactMatch) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*Levenshtein) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*NumericDiff) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*JSONValid) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*ListContains) ObservesContext() bool { return true }
