import type { Problem, ProblemDetail } from "./types.js";

/**
 * ScorekitError is every error the client throws: a problem detail the service answered
 * (RFC 9457, with the service's stable `code`), or a failure on the client's side.
 *
 * Branch on `code`, never on the message. The service's codes are listed in docs/SERVICE.md
 * (`invalid_request`, `invalid_run`, `invalid_config`, `unauthorized`, `scorer_not_allowed`,
 * `not_found`, `unknown_scorer`, `body_too_large`, `rate_limited`, `overloaded`, `internal`
 * ...). The client adds its own, with `status` 0 when no HTTP answer carried them:
 *
 * - `unreachable`: no answer at all (connection refused, DNS, TLS); `cause` has the reason.
 * - `bad_response`: an answer that is not the service's (a proxy's HTML page, a body that is
 *   not JSON); `status` is the HTTP status and `detail` the start of the body.
 * - `wait_timeout`: {@link ScorekitClient.waitForEvaluation} gave up before the evaluation
 *   was done; the evaluation goes on in the service.
 */
export class ScorekitError extends Error {
  /** The stable, machine-readable code: what to branch on. */
  readonly code: string;
  /** The HTTP status, or 0 when the service gave no answer. */
  readonly status: number;
  /** What is wrong and, where the service knows, how to fix it. */
  readonly detail: string;
  /** The HTTP status's title ("Not Found"), when the service answered. */
  readonly title: string;
  /** Field-level errors of a request the service could not validate, when it lists them. */
  readonly errors: ProblemDetail[];
  /** The problem document as the service sent it, when it sent one. */
  readonly problem?: Problem;
  /** Seconds the service asked to wait before trying again (429, 503), when it said. */
  readonly retryAfter?: number;

  constructor(init: {
    code: string;
    status: number;
    detail: string;
    title?: string;
    errors?: ProblemDetail[] | null;
    problem?: Problem;
    retryAfter?: number;
    cause?: unknown;
  }) {
    super(`scorekit: ${init.code}${init.status ? ` (HTTP ${init.status})` : ""}: ${init.detail}`, { cause: init.cause });
    this.name = "ScorekitError";
    this.code = init.code;
    this.status = init.status;
    this.detail = init.detail;
    this.title = init.title ?? "";
    this.errors = init.errors ?? [];
    if (init.problem !== undefined) this.problem = init.problem;
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
  }
}

/** isProblem reports whether a parsed body has the shape of the service's problem details. */
function isProblem(body: unknown): body is Problem {
  if (typeof body !== "object" || body === null) return false;
  const p = body as Record<string, unknown>;
  return typeof p.code === "string" && typeof p.status === "number";
}

/**
 * problemError turns an error answer into a ScorekitError. `body` is what openapi-fetch
 * parsed (JSON when it could, else the text).
 */
export function problemError(response: Response, body: unknown): ScorekitError {
  const retry = Number(response.headers.get("Retry-After"));
  const retryAfter = Number.isFinite(retry) && retry > 0 ? retry : undefined;
  if (isProblem(body)) {
    return new ScorekitError({
      code: body.code,
      status: response.status,
      detail: body.detail ?? body.title,
      title: body.title,
      errors: body.errors ?? null,
      problem: body,
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    });
  }
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new ScorekitError({
    code: "bad_response",
    status: response.status,
    title: response.statusText,
    detail: `${response.url} answered HTTP ${response.status} without a problem document: ${(text ?? "").slice(0, 200)}; is the base URL a scorekit service?`,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });
}

/** unreachableError wraps a failed fetch (no HTTP answer). */
export function unreachableError(baseUrl: string, cause: unknown): ScorekitError {
  const reason = cause instanceof Error ? describeFetchError(cause) : String(cause);
  return new ScorekitError({
    code: "unreachable",
    status: 0,
    detail: `cannot reach the scorekit service at ${baseUrl}: ${reason}; check the URL and that scorekit serve is running`,
    cause,
  });
}

// Node's fetch says only "fetch failed"; the reason (ECONNREFUSED ...) is in its cause.
function describeFetchError(err: Error): string {
  const inner = (err as { cause?: unknown }).cause;
  if (inner instanceof Error && inner.message) return `${err.message} (${inner.message})`;
  return err.message;
}

/**
 * ScoreFailedError is what a scorer that tried and could not judge becomes where a score is
 * required (the Mastra adapter): the result's status was `failed`. It is never turned into a
 * score of 0. `code` is the result's error code (`judge_error`, `timeout`, `invalid_run` ...).
 */
export class ScoreFailedError extends Error {
  /** The scorer that failed. */
  readonly scorer: string;
  /** The result's error code. */
  readonly code: string;
  /** The result's error message, or its reason. */
  readonly detail: string;
  /** The whole result, as the service returned it. */
  readonly result: unknown;

  constructor(scorer: string, code: string, detail: string, result: unknown) {
    super(`scorekit: scorer ${scorer} failed (${code}): ${detail}`);
    this.name = "ScoreFailedError";
    this.scorer = scorer;
    this.code = code;
    this.detail = detail;
    this.result = result;
  }
}

/**
 * scorekitErrorOf finds the scorekit error behind an error that a framework wrapped, or
 * returns undefined. Mastra wraps what a scorer step throws in its ScorerRunError and passes
 * the original on as a copy (a plain Error and object, no longer an instance of its class),
 * so `instanceof` alone misses it: this walks the `cause` chain and rebuilds a
 * {@link ScoreFailedError} or {@link ScorekitError} from the copy's fields.
 *
 * ```ts
 * try { await scorer.run(run) } catch (err) {
 *   const e = scorekitErrorOf(err);
 *   if (e instanceof ScoreFailedError) console.log(e.code); // judge_error, timeout ...
 * }
 * ```
 */
export function scorekitErrorOf(err: unknown): ScoreFailedError | ScorekitError | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 16 && typeof e === "object" && e !== null; depth++) {
    if (e instanceof ScoreFailedError || e instanceof ScorekitError) return e;
    const f = e as Record<string, unknown>;
    if (f.name === "ScoreFailedError" && typeof f.scorer === "string" && typeof f.code === "string") {
      return new ScoreFailedError(f.scorer, f.code, typeof f.detail === "string" ? f.detail : "", f.result);
    }
    if (f.name === "ScorekitError" && typeof f.code === "string" && typeof f.status === "number") {
      return new ScorekitError({
        code: f.code,
        status: f.status,
        detail: typeof f.detail === "string" ? f.detail : "",
        ...(typeof f.title === "string" ? { title: f.title } : {}),
        ...(Array.isArray(f.errors) ? { errors: f.errors as ProblemDetail[] } : {}),
        ...(typeof f.problem === "object" && f.problem !== null ? { problem: f.problem as Problem } : {}),
        ...(typeof f.retryAfter === "number" ? { retryAfter: f.retryAfter } : {}),
      });
    }
    e = f.cause;
  }
  return undefined;
}
