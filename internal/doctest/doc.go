// Package doctest follows the documentation's walkthroughs step by step, as a reader
// would, so that CI fails when a documented command or file stops working. Its tests read
// the Markdown itself: files shown in ```go NAME blocks are written, ```sh blocks are run
// in one shell in order, and a ```text block after a ```sh block must appear in what that
// step printed. docs/SCORERS.md's commands (scorekit schema NAME, echo '<run>' | scorekit
// score ... -) are read with a Markdown and a shell parser and run in-process, each
// example's result held to the sentence or block after it that states it.
package doctest
