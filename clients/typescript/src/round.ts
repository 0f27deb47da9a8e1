// The service sends means and pass rates as computed (0.8099999999999999); the client
// hands them out rounded as the scorekit command line prints them, so the two agree on
// the same runs: a mean to 2 decimals (%.2f), a pass rate to a whole percent (%.0f%% of
// the rate times 100). client.api gives the unrounded values.
import type { Evaluation, Insight } from "./types.js";

/**
 * Rounds x to `digits` decimals the way Go's fmt does (`%.Nf`): to the nearest, and on an
 * exact tie to the even neighbour, where `toFixed` goes up (0.125 is 0.12 for Go).
 */
export function fixed(x: number, digits: number): number {
  // A double is exactly halfway at `digits` decimals only when x·2^(digits+1) is an odd
  // integer (a tie is a dyadic rational); then x·10^digits is an exact half-integer.
  const scaled = x * 2 ** (digits + 1);
  if (Number.isInteger(scaled) && scaled % 2 !== 0) {
    const lo = Math.floor(x * 10 ** digits);
    return (lo % 2 === 0 ? lo : lo + 1) / 10 ** digits;
  }
  return Number(x.toFixed(digits));
}

/** A mean as the CLI prints it (2 decimals); null and undefined stay. */
export function roundMean<T extends number | null | undefined>(mean: T): T {
  return (typeof mean === "number" ? fixed(mean, 2) : mean) as T;
}

/** A pass rate (0-1) as the CLI prints it: a whole percent. */
export function roundPassRate<T extends number | null | undefined>(rate: T): T {
  return (typeof rate === "number" ? fixed(rate * 100, 0) / 100 : rate) as T;
}

/** roundEvaluation rounds the means and pass rates of an evaluation's summaries, in place. */
export function roundEvaluation(ev: Evaluation): Evaluation {
  for (const s of ev.scorers ?? []) {
    s.mean = roundMean(s.mean);
    s.pass_rate = roundPassRate(s.pass_rate);
    if (s.previous) {
      s.previous.mean = roundMean(s.previous.mean);
      s.previous.pass_rate = roundPassRate(s.previous.pass_rate);
    }
  }
  return ev;
}

/** roundInsight rounds the means of an insight's windows, in place. */
export function roundInsight(insight: Insight): Insight {
  const ev = insight.evidence;
  ev.window.mean = roundMean(ev.window.mean);
  if (ev.previous) ev.previous.mean = roundMean(ev.previous.mean);
  return insight;
}
