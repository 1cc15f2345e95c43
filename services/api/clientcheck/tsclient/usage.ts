// Compiled (tsc --strict) against xbot.ts, the types openapi-typescript
// generates from the API's document (never committed): what a client
// program relies on must keep compiling.
import createClient from "openapi-fetch";
import type { components, paths } from "./xbot";

type Problem = components["schemas"]["Problem"];
type EventEnvelope = components["schemas"]["EventEnvelope"];

// describe names an event by its type; the payload is typed by it.
export function describe(e: EventEnvelope): string {
  switch (e.type) {
    case "runtime.run.accepted":
      return `accepted ${e.payload.agentId} in ${e.commandId}`;
    case "runtime.item.started":
      return `item ${e.itemId} ${e.payload.itemType}`;
    default:
      return e.type;
  }
}

// lastEvents reads a run's events after a seq; every error answer is a
// Problem with a code of the error registry.
export async function lastEvents(baseUrl: string, token: string, runId: string, afterSeq: number): Promise<string[]> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
  const { data, error } = await client.GET("/v1/runs/{runId}/events", {
    params: { path: { runId }, query: { afterSeq, limit: 100 } },
  });
  if (error) {
    const problem: Problem = error;
    throw new Error(`${problem.code}: ${problem.title}`);
  }
  return data.events.map(describe);
}
