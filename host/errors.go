package host

import "errors"

// Errors callers branch on, with errors.Is; every error the host returns for one of these
// reasons wraps it, with a message that says what is wrong and what fixes it.
var (
	// ErrUnknownScorer: no scorer is registered under that name.
	ErrUnknownScorer = errors.New("unknown scorer")
	// ErrUnavailable: the scorer's plugin failed to load.
	ErrUnavailable = errors.New("scorer unavailable")
	// ErrDuplicate: a scorer with that name is registered already.
	ErrDuplicate = errors.New("scorer already registered")
	// ErrABIMismatch: the scorer was built for another contract version.
	ErrABIMismatch = errors.New("ABI version mismatch")
	// ErrInvalidConfig: the config does not match the scorer's config schema.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrInvalidInfo is wrapped by the errors of [DecodeInfo] and by Open when a scorer's
	// Info cannot be honoured (an empty range, negative weights).
	ErrInvalidInfo = errors.New("invalid scorer info")
	// ErrLimitExceeded is wrapped by the errors of [RunLimits.Check] and
	// [RunLimits.CheckSize].
	ErrLimitExceeded = errors.New("run over a limit")
	// ErrRunDeadline is wrapped by the error of a batch's run that ran past the timeout
	// its caller gave ScoreBatch.
	ErrRunDeadline = errors.New("run deadline")
	// ErrNotManifest: a path given to [LoadPlugins] is neither a folder nor a manifest.
	ErrNotManifest = errors.New("not a plugin manifest")
	// ErrOverCeiling is wrapped by [Limits.Within] when a plugin asks for more than the
	// host allows.
	ErrOverCeiling = errors.New("limit above the host's ceiling")
	// ErrHashMismatch: the artifact's sha256 differs from the manifest's.
	ErrHashMismatch = errors.New("artifact sha256 mismatch")
)
