//go:build !unix

package cli

import "time"

func selfUsage() (time.Duration, int64) { return 0, 0 }
