import { ScorekitClient, ScorekitError } from "@scorekit/client";

const client = new ScorekitClient({
  baseUrl: process.env.SCOREKIT_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.SCOREKIT_KEY, // scorekit keys create --tenant NAME
});

try {
  const result = await client.score({
    scorer: "prescreen",
    run: { input: "What is the capital of France?", output: "Paris" },
  });
  console.log(`${result.status} ${result.score} passed=${result.passed}: ${result.reason}`);
} catch (err) {
  if (err instanceof ScorekitError) {
    console.error(`${err.code} (HTTP ${err.status}): ${err.detail}`);
    process.exit(1);
  }
  throw err;
}
