package hallucination

// Formula is formula, for the package's external tests.
var Formula = formula
