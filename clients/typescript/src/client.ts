import createClient, { type Client } from "openapi-fetch";

import { ScorekitError, problemError, unreachableError } from "./errors.js";
import type { paths } from "./openapi.js";
import { roundEvaluation, roundInsight } from "./round.js";
import type {
  AgentsPage,
  AuditEntry,
  Deleted,
  Evaluation,
  EvaluationRequest,
  ImportResult,
  Insight,
  InsightQuery,
  InsightsPage,
  JudgeEndpoint,
  Label,
  LabelImportResult,
  LabelInput,
  LabelLine,
  LabelQuery,
  LabelsPage,
  AgreementQuery,
  Policy,
  PromoteOptions,
  PublishRequest,
  PublishedVersion,
  Result,
  Run,
  RunView,
  RunsPage,
  ScoreLabelledResult,
  ScoreRequest,
  ScorerAgreement,
  ScorerInfo,
} from "./types.js";

/**
 * One line of an export (GET /v1/export): `kind` is tenant, key, agent_policy, run, result,
 * evaluation, insight, audit, or end (the last line, which counts each kind).
 */
export interface ExportLine {
  kind: string;
  data: unknown;
}

/** Options of {@link ScorekitClient}. */
export interface ClientOptions {
  /** Where `scorekit serve` listens, e.g. `http://127.0.0.1:8080`. Required. */
  baseUrl: string;
  /**
   * The API key (`scorekit keys create --tenant NAME` prints it), sent as
   * `Authorization: Bearer KEY`. Optional only for a service that runs open on loopback.
   */
  apiKey?: string;
  /** A fetch to use instead of the global one (a proxy, a test recorder). Optional. */
  fetch?: (input: Request) => Promise<Response>;
  /** Headers sent with every request. Optional. */
  headers?: Record<string, string>;
}

/** Options of {@link ScorekitClient.waitForEvaluation}. */
export interface WaitOptions {
  /** How long to wait in all, in milliseconds. Optional. Default is 120000 (2 minutes). */
  timeoutMs?: number;
  /** Include the results (default true) or only the summary. */
  results?: boolean;
  /** Include each result's pipeline steps (judge prompts; large). Default false. */
  steps?: boolean;
  /** Abort the wait (the evaluation goes on in the service). Optional. */
  signal?: AbortSignal;
}

/** The longest wait one request asks the service for; it allows up to 60 s. */
const longPollMs = 30_000;

/**
 * ScorekitClient calls the scorekit evaluation service. Each method is one endpoint of
 * openapi.json, typed from it; a problem-detail answer is thrown as a
 * {@link ScorekitError} carrying `code`, `status` and `detail`. `api` is the typed
 * openapi-fetch client underneath, for any endpoint the methods do not cover.
 *
 * ```ts
 * const client = new ScorekitClient({ baseUrl: "http://127.0.0.1:8080", apiKey: process.env.SCOREKIT_KEY });
 * const result = await client.score({ scorer: "prescreen", run: { input: "What is the capital of France?", output: "Paris" } });
 * ```
 */
export class ScorekitClient {
  /** The typed openapi-fetch client (paths and bodies from the OpenAPI document). */
  readonly api: Client<paths>;
  readonly #baseUrl: string;

  constructor(options: ClientOptions) {
    if (!options?.baseUrl) {
      throw new TypeError("ScorekitClient: baseUrl is required, e.g. http://127.0.0.1:8080 (where scorekit serve listens)");
    }
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
    this.api = createClient<paths>({
      baseUrl: this.#baseUrl,
      headers,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  /** Scores one run with one scorer; nothing is stored (POST /v1/score). */
  async score(request: ScoreRequest, init?: { signal?: AbortSignal }): Promise<Result> {
    return this.#call(() => this.api.POST("/v1/score", { body: request, ...init }));
  }

  /**
   * Stores runs (POST /v1/runs): one run, an array of runs, or JSONL text (one run a line).
   * `agent` names the agent of runs that name none. Runs are stored once per id; a bad run
   * is rejected with its line and reason in the answer, and the others are kept.
   */
  async importRuns(runs: Run | Run[] | string, options: { agent?: string; signal?: AbortSignal } = {}): Promise<ImportResult> {
    const query = options.agent !== undefined ? { agent: options.agent } : undefined;
    const init = options.signal ? { signal: options.signal } : {};
    if (typeof runs === "string") {
      return this.#call(() =>
        this.api.POST("/v1/runs", {
          params: { query },
          body: runs,
          bodySerializer: (body: unknown) => body as string,
          headers: { "Content-Type": "application/x-ndjson" },
          ...init,
        }),
      );
    }
    return this.#call(() => this.api.POST("/v1/runs", { params: { query }, body: runs, ...init }));
  }

  /**
   * Starts an evaluation of the agent's `limit` newest runs (POST
   * /v1/agents/{agent}/evaluations) and returns it at once, `running`; follow it with
   * {@link getEvaluation} or {@link waitForEvaluation}, or call {@link evaluate}.
   */
  async createEvaluation(agent: string, request: EvaluationRequest, init?: { signal?: AbortSignal }): Promise<Evaluation> {
    return roundEvaluation(
      await this.#call(() => this.api.POST("/v1/agents/{agent}/evaluations", { params: { path: { agent } }, body: request, ...init })),
    );
  }

  /**
   * Reads an evaluation (GET /v1/evaluations/{id}). `wait` ("30s", at most "60s") makes the
   * service hold the answer until the evaluation is done or the wait ends.
   */
  async getEvaluation(
    id: string,
    options: { wait?: string; results?: boolean; steps?: boolean; signal?: AbortSignal } = {},
  ): Promise<Evaluation> {
    const { signal, ...query } = options;
    return roundEvaluation(
      await this.#call(() => this.api.GET("/v1/evaluations/{id}", { params: { path: { id }, query }, ...(signal ? { signal } : {}) })),
    );
  }

  /**
   * Waits until the evaluation is `done` and returns it, asking the service to hold each
   * request up to 30 s (no busy polling). Throws a {@link ScorekitError} with code
   * `wait_timeout` after `timeoutMs`.
   */
  async waitForEvaluation(id: string, options: WaitOptions = {}): Promise<Evaluation> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      const left = deadline - Date.now();
      const wait = Math.max(1, Math.min(left, longPollMs));
      const ev = await this.getEvaluation(id, {
        wait: `${wait}ms`,
        ...(options.results !== undefined ? { results: options.results } : {}),
        ...(options.steps !== undefined ? { steps: options.steps } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (ev.status === "done") return ev;
      if (Date.now() >= deadline) {
        throw new ScorekitError({
          code: "wait_timeout",
          status: 0,
          detail: `evaluation ${id} is not done after ${options.timeoutMs ?? 120_000} ms (${ev.done_results} of ${ev.expected_results} results); it goes on in the service: wait again, or raise timeoutMs`,
        });
      }
    }
  }

  /** Starts an evaluation of the agent's newest runs and waits until it is done. */
  async evaluate(agent: string, request: EvaluationRequest, options: WaitOptions = {}): Promise<Evaluation> {
    const ev = await this.createEvaluation(agent, request, options.signal ? { signal: options.signal } : undefined);
    return this.waitForEvaluation(ev.id, options);
  }

  /** The agent's evaluations, newest first, with their summaries (GET /v1/agents/{agent}/evaluations). */
  async listEvaluations(agent: string, options: { limit?: number } = {}): Promise<Evaluation[]> {
    const list = await this.#call(() =>
      this.api.GET("/v1/agents/{agent}/evaluations", { params: { path: { agent }, query: options } }),
    );
    return (list ?? []).map(roundEvaluation);
  }

  /** A stored run with every result it ever had, oldest first (GET /v1/runs/{id}). */
  async getRun(id: string, options: { steps?: boolean } = {}): Promise<RunView> {
    return this.#call(() => this.api.GET("/v1/runs/{id}", { params: { path: { id }, query: options } }));
  }

  /** A page of the agent's runs, newest first (GET /v1/agents/{agent}/runs); `next` is the cursor of the next page. */
  async listRuns(agent: string, options: { limit?: number; cursor?: string } = {}): Promise<RunsPage> {
    return this.#call(() => this.api.GET("/v1/agents/{agent}/runs", { params: { path: { agent }, query: options } }));
  }

  /** A page of the tenant's agents with their run counts (GET /v1/agents). */
  async listAgents(options: { limit?: number; cursor?: string } = {}): Promise<AgentsPage> {
    return this.#call(() => this.api.GET("/v1/agents", { params: { query: options } }));
  }

  /** The scorers the tenant may run (GET /v1/scorers). */
  async listScorers(): Promise<ScorerInfo[]> {
    const list = await this.#call(() => this.api.GET("/v1/scorers"));
    return list ?? [];
  }

  /**
   * Publishes a new version of one of the tenant's scorers (POST /v1/scorers). A WASM
   * module may be given as bytes; it is sent as base64. A refusal is a ScorekitError with
   * code `scorer_refused` (422) or `body_too_large` (413) and a detail that says what to fix.
   */
  async publishScorer(request: Omit<PublishRequest, "module"> & { module?: Uint8Array | string }): Promise<PublishedVersion> {
    const { module, ...rest } = request;
    const body: PublishRequest = { ...rest };
    if (module !== undefined) {
      body.module = typeof module === "string" ? module : base64(module);
    }
    return this.#call(() => this.api.POST("/v1/scorers", { body }));
  }

  /** The versions of one of the tenant's scorers, oldest first (GET /v1/scorers/{name}/versions). */
  async listScorerVersions(name: string): Promise<PublishedVersion[]> {
    const list = await this.#call(() => this.api.GET("/v1/scorers/{name}/versions", { params: { path: { name } } }));
    return list ?? [];
  }

  /** One version of one of the tenant's scorers (GET /v1/scorers/{name}/versions/{version}). */
  async getScorerVersion(name: string, version: number): Promise<PublishedVersion> {
    return this.#call(() => this.api.GET("/v1/scorers/{name}/versions/{version}", { params: { path: { name, version } } }));
  }

  /**
   * Makes the plain name follow `version`; an older one is the rollback (POST .../promote).
   * Under the tenant's agreement gate the answer's `gate` holds the gate's report; a refused
   * promotion is a ScorekitError with code `agreement_gate`, and `options.override` (the reason)
   * promotes it anyway, recorded with the promotion.
   */
  async promoteScorer(name: string, version: number, options?: PromoteOptions): Promise<PublishedVersion> {
    return this.#call(() =>
      this.api.POST("/v1/scorers/{name}/versions/{version}/promote", { params: { path: { name, version } }, ...(options ? { body: options } : {}) }),
    );
  }

  /** Deletes a version that is not promoted; its results stay (DELETE /v1/scorers/{name}/versions/{version}). */
  async deleteScorerVersion(name: string, version: number): Promise<void> {
    await this.#call(() => this.api.DELETE("/v1/scorers/{name}/versions/{version}", { params: { path: { name, version } } }));
  }

  /** The agent's on-arrival policy (GET /v1/agents/{agent}/policy); `not_found` when it has none. */
  async getPolicy(agent: string): Promise<Policy> {
    return this.#call(() => this.api.GET("/v1/agents/{agent}/policy", { params: { path: { agent } } }));
  }

  /** Sets the agent's on-arrival policy (PUT /v1/agents/{agent}/policy). */
  async putPolicy(agent: string, policy: Policy): Promise<Policy> {
    return this.#call(() => this.api.PUT("/v1/agents/{agent}/policy", { params: { path: { agent } }, body: policy }));
  }

  /** Removes the agent's on-arrival policy (DELETE /v1/agents/{agent}/policy). */
  async deletePolicy(agent: string): Promise<void> {
    await this.#call(() => this.api.DELETE("/v1/agents/{agent}/policy", { params: { path: { agent } } }));
  }

  /** The judge endpoints the operator allows, with their models and the state of the tenant's own key for each (GET /v1/judge/endpoints). */
  async listJudgeEndpoints(): Promise<JudgeEndpoint[]> {
    return (await this.#call(() => this.api.GET("/v1/judge/endpoints"))) ?? [];
  }

  /**
   * Stores the tenant's own API key for a judge endpoint (PUT /v1/judge/endpoints/{endpoint}/key,
   * an admin key's): the tenant's judge calls there carry it from then on. It is sealed before
   * it is stored and never returned.
   */
  async setJudgeKey(endpoint: string, key: string): Promise<void> {
    await this.#call(() => this.api.PUT("/v1/judge/endpoints/{endpoint}/key", { params: { path: { endpoint } }, body: { key } }));
  }

  /** Removes the tenant's own key for a judge endpoint (DELETE /v1/judge/endpoints/{endpoint}/key). */
  async deleteJudgeKey(endpoint: string): Promise<void> {
    await this.#call(() => this.api.DELETE("/v1/judge/endpoints/{endpoint}/key", { params: { path: { endpoint } } }));
  }

  /**
   * The tenant's insights, most severe first (GET /v1/insights): open ones unless `state`
   * says `resolved` or `all`, of one `severity` when given. `wait` ("30s", at most "60s")
   * holds the answer until the insights being updated after new results are up to date.
   */
  async listInsights(options: InsightQuery & { signal?: AbortSignal } = {}): Promise<InsightsPage> {
    const { signal, ...query } = options;
    return roundInsights(await this.#call(() => this.api.GET("/v1/insights", { params: { query }, ...(signal ? { signal } : {}) })));
  }

  /** The insights of one agent (GET /v1/agents/{agent}/insights), with the options of {@link listInsights}. */
  async listAgentInsights(agent: string, options: InsightQuery & { signal?: AbortSignal } = {}): Promise<InsightsPage> {
    const { signal, ...query } = options;
    return roundInsights(
      await this.#call(() => this.api.GET("/v1/agents/{agent}/insights", { params: { path: { agent }, query }, ...(signal ? { signal } : {}) })),
    );
  }

  /** One insight, open or resolved, with its evidence (GET /v1/insights/{id}). */
  async getInsight(id: string): Promise<Insight> {
    return roundInsight(await this.#call(() => this.api.GET("/v1/insights/{id}", { params: { path: { id } } })));
  }

  /** Deletes a run and its results (DELETE /v1/runs/{id}); an import of its id within 30 days answers `deleted` and stores nothing. */
  async deleteRun(id: string): Promise<Deleted> {
    return this.#call(() => this.api.DELETE("/v1/runs/{id}", { params: { path: { id } } }));
  }

  /** Deletes an agent: its runs, results, evaluations, insights and policy (DELETE /v1/agents/{agent}). */
  async deleteAgent(agent: string): Promise<Deleted> {
    return this.#call(() => this.api.DELETE("/v1/agents/{agent}", { params: { path: { agent } } }));
  }

  /** Deletes the key's tenant and everything it owns, its keys first (DELETE /v1/tenant); export first to keep a copy. */
  async deleteTenant(): Promise<Deleted> {
    return this.#call(() => this.api.DELETE("/v1/tenant"));
  }

  /** The tenant's audit log, newest first (GET /v1/audit): who deleted or exported what, and when. */
  async auditLog(options: { limit?: number; before?: number } = {}): Promise<AuditEntry[]> {
    const page = await this.#call(() => this.api.GET("/v1/audit", { params: { query: options } }));
    return page.entries ?? [];
  }

  /**
   * Everything the tenant owns (GET /v1/export), line by line as the service streams it.
   * Throws a ScorekitError `export_cut_short` when the stream ends without its `end` line.
   */
  async *export(init?: { signal?: AbortSignal }): AsyncGenerator<ExportLine> {
    const body = await this.#call(() => this.api.GET("/v1/export", { parseAs: "stream", ...(init?.signal ? { signal: init.signal } : {}) }));
    if (!body) throw new ScorekitError({ code: "bad_response", status: 0, detail: "the export had no body" });
    const decoder = new TextDecoder();
    let rest = "";
    let ended = false;
    const reader = (body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl).trim();
        rest = rest.slice(nl + 1);
        if (line === "") continue;
        const parsed = JSON.parse(line) as ExportLine;
        ended = parsed.kind === "end";
        yield parsed;
      }
    }
    if (!ended) {
      throw new ScorekitError({ code: "export_cut_short", status: 0, detail: "the export ended without its end line: it was cut short; export again" });
    }
  }

  /**
   * Records a person's judgement of a run for a scorer, or for a criterion several scorers
   * share (PUT /v1/runs/{id}/labels/{scorer}): the labeller and exactly one of `passed`,
   * `score` (0 to 1) or `choice`. The same labeller labelling again replaces their label.
   */
  async putLabel(runId: string, scorer: string, label: LabelInput): Promise<Label> {
    return this.#call(() => this.api.PUT("/v1/runs/{id}/labels/{scorer}", { params: { path: { id: runId, scorer } }, body: label }));
  }

  /** A run's labels, of one scorer when `scorer` is given (GET /v1/runs/{id}/labels). */
  async listRunLabels(runId: string, options: { scorer?: string } = {}): Promise<Label[]> {
    const list = await this.#call(() => this.api.GET("/v1/runs/{id}/labels", { params: { path: { id: runId }, query: options } }));
    return list ?? [];
  }

  /** A page of the tenant's labels, by scorer or labeller when given (GET /v1/labels). */
  async listLabels(options: LabelQuery = {}): Promise<LabelsPage> {
    return this.#call(() => this.api.GET("/v1/labels", { params: { query: options } }));
  }

  /** Removes the labeller's label of the run for the scorer (DELETE /v1/runs/{id}/labels/{scorer}). */
  async deleteLabel(runId: string, scorer: string, labeller: string): Promise<void> {
    await this.#call(() =>
      this.api.DELETE("/v1/runs/{id}/labels/{scorer}", { params: { path: { id: runId, scorer }, query: { labeller } } }),
    );
  }

  /**
   * Stores labels (POST /v1/labels) from JSONL text or an array of lines; a bad line is
   * rejected with its line number and reason in the answer, and the others are stored.
   */
  async importLabels(labels: string | LabelLine[]): Promise<LabelImportResult> {
    const body = typeof labels === "string" ? labels : labels.map((l) => JSON.stringify(l)).join("\n");
    return this.#call(() =>
      this.api.POST("/v1/labels", {
        body,
        bodySerializer: (b: unknown) => b as string,
        headers: { "Content-Type": "application/x-ndjson" },
      }),
    );
  }

  /**
   * How well a scorer version agrees with the tenant's labels (GET
   * /v1/scorers/{scorer}/agreement): accuracy, Cohen's kappa, failure precision and recall,
   * the confusion matrix, Spearman, Kendall and MAE, each with its 95% interval and N; the
   * disagreements; the labellers' agreement with each other; the runs not scored yet.
   */
  async getAgreement(scorer: string, options: AgreementQuery = {}): Promise<ScorerAgreement> {
    return this.#call(() => this.api.GET("/v1/scorers/{scorer}/agreement", { params: { path: { scorer }, query: options } }));
  }

  /**
   * Enqueues the scoring of the labelled runs the service's version of the scorer has not
   * scored (POST /v1/scorers/{scorer}/agreement/score), one evaluation per agent; follow
   * them with {@link waitForEvaluation}. {@link getAgreement}'s `not_scored` says how many
   * runs and the judge cost first.
   */
  async scoreLabelled(scorer: string, options: { criterion?: string } = {}): Promise<ScoreLabelledResult> {
    return this.#call(() => this.api.POST("/v1/scorers/{scorer}/agreement/score", { params: { path: { scorer }, query: options } }));
  }

  // #call runs one openapi-fetch request and returns its data, or throws a ScorekitError.
  async #call<T>(request: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    let out: { data?: T; error?: unknown; response: Response };
    try {
      out = await request();
    } catch (err) {
      if (err instanceof Error && err.name === "AbortError") throw err;
      // openapi-fetch parses a successful answer as JSON: a page that is not is not the service.
      if (err instanceof SyntaxError) {
        throw new ScorekitError({
          code: "bad_response",
          status: 0,
          detail: `${this.#baseUrl} answered with a body that is not JSON (${err.message}); is the base URL a scorekit service?`,
          cause: err,
        });
      }
      throw unreachableError(this.#baseUrl, err);
    }
    if (!out.response.ok) throw problemError(out.response, out.error);
    return out.data as T;
  }
}

function roundInsights(page: InsightsPage): InsightsPage {
  page.insights = page.insights?.map(roundInsight) ?? page.insights;
  return page;
}

// base64 encodes bytes with what browsers and Node both have (btoa), in chunks so that a
// module of megabytes does not overflow the argument list.
function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
