// @scorekit/client: a typed client for the scorekit evaluation service.
// The Mastra adapter is a separate entry point: @scorekit/client/mastra.
export { ScorekitClient } from "./client.js";
export type { ClientOptions, ExportLine, WaitOptions } from "./client.js";
export { ScoreFailedError, ScorekitError, scorekitErrorOf } from "./errors.js";
export type * from "./types.js";
