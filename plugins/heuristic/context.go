package heuristic

// The scorers below return promptly once their context is done: their cost is bounded
// (alignBudget, overlapBudget, listPairs) and their long loops look at the context, and
// linear passes look between them. ObservesContext tells a host (host.ContextObserver) that
// it may call them on the caller's goroutine without a watchdog.

// ObservesContext reports true: see the package's cost limits.
func (*completenessScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*contentSimilarityScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*keywordCoverageScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*textualDifferenceScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*toneScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*exactMatchScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*levenshteinScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*numericDiffScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*jsonValidScorer) ObservesContext() bool { return true }

// ObservesContext reports true: see the package's cost limits.
func (*listContainsScorer) ObservesContext() bool { return true }
