// XbotChatTransport: the AI SDK's ChatTransport (ai@6, `useChat` of
// @ai-sdk/react@3) for xbot. docs/clients.md explains it; the browser test
// (../browser_test.go) drives it through page.jsx.
//
// - sendMessages posts the chat's last user message as the session's next
//   message (Idempotency-Key = the message's id, so a retried send is the
//   same input) and returns the reply's UI message stream;
// - reconnectToStream (useChat's `resume: true`) finds the session's open
//   reply and streams it from its start; null when every reply has ended;
// - approve decides a tool call that waits for approval.
//
// The chat id is the session's platformSessionId. `api` is the base of the
// API's /v1 routes: a backend-for-frontend that adds the bearer token (the
// default, "/api"), or the API itself on another origin when its CORS
// settings allow the page's origin and `headers` carry a token. `submit`
// is "session" (POST /v1/sessions/{id}/messages) or, for an API without
// that route, "runs".
import { parseJsonEventStream, uiMessageChunkSchema } from 'ai';

export class XbotChatTransport {
  constructor({ api = '/api', agentId, headers = {}, wait = '10s', submit = 'session', fetch = globalThis.fetch.bind(globalThis) }) {
    Object.assign(this, { api, agentId, headers, wait, fetch });
    this.submit = submit === 'runs' ? this.submitToRuns : this.submitToSession;
  }

  async sendMessages({ chatId, messages, abortSignal }) {
    const last = messages[messages.length - 1];
    const content = last.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    const runId = await this.submit(chatId, content, last.id, abortSignal);
    return this.stream(runId, abortSignal);
  }

  async reconnectToStream({ chatId, abortSignal }) {
    const runId = await this.openReply(chatId, abortSignal);
    return runId ? this.stream(runId, abortSignal) : null;
  }

  // approve decides the tool call of an approval-requested tool part
  // (approvalId = its item id) of the reply runId (the message's id).
  async approve(runId, approvalId, decision = 'allow', scope = 'item') {
    await this.call('POST', `/v1/runs/${enc(runId)}/approval-decisions?wait=${this.wait}`,
      { itemId: approvalId, decision, scope }, `${approvalId}:${decision}`);
  }

  // submitToSession sends content as the session's next message and returns
  // the run it went to: the executor routes it (a new run of the session, a
  // steer, an answer, or queued behind an approval).
  async submitToSession(chatId, content, messageId, signal) {
    const res = await this.call('POST', `/v1/sessions/${enc(chatId)}/messages?wait=${this.wait}`,
      { content, agentId: this.agentId }, messageId, signal);
    if (!TAKEN.has(res.outcome)) throw new Error(`message ${res.commandId} is ${res.outcome} ${res.code ?? ''}`.trim());
    return res.runId;
  }

  // submitToRuns does what submitToSession does with the run endpoints: the
  // first message creates the session's run, a later one follows up on the
  // session's last run (which must have ended: invalid_state otherwise).
  async submitToRuns(chatId, content, messageId, signal) {
    const session = await this.session(chatId, signal);
    if (!session) {
      const created = await this.call('POST', `/v1/runs?wait=${this.wait}`,
        { agentId: this.agentId, platformSessionId: chatId, input: { content } }, messageId, signal);
      return created.runId;
    }
    const res = await this.call('POST', `/v1/runs/${enc(session.lastRunId)}/inputs?wait=${this.wait}`,
      { intent: 'follow_up', content }, messageId, signal);
    if (!res.createdRunId) throw new Error(`follow-up ${res.commandId} is ${res.outcome} ${res.code ?? ''}`);
    return res.createdRunId;
  }

  // openReply returns the run whose reply has not ended, or null.
  async openReply(chatId, signal) {
    const session = await this.session(chatId, signal);
    return session && !ENDED.has(session.lastRunStatus) ? session.lastRunId : null;
  }

  // session returns the session's summary, null when it has no run yet.
  async session(chatId, signal) {
    const res = await this.call('GET', `/v1/sessions/${enc(chatId)}/runs?limit=1`, undefined, undefined, signal, [404]);
    return res?.session ?? null;
  }

  // stream opens the reply of runId as UI message chunks.
  async stream(runId, signal) {
    const res = await this.fetch(`${this.api}/v1/runs/${enc(runId)}/stream`,
      { headers: { ...this.headers, Accept: 'text/event-stream' }, signal });
    if (!res.ok || !res.body) throw await problem(res);
    return parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          if (!chunk.success) throw chunk.error;
          controller.enqueue(chunk.value);
        },
      }),
    );
  }

  // call sends one request and returns its JSON answer; a status in absent
  // returns null, any other error answer throws its problem.
  async call(method, path, body, key, signal, absent = []) {
    const headers = { ...this.headers };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (key) headers['Idempotency-Key'] = key;
    const res = await this.fetch(`${this.api}${path}`,
      { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    if (absent.includes(res.status)) return null;
    if (!res.ok) throw await problem(res);
    return res.json();
  }
}

// TAKEN are the outcomes of a message that went to a run.
const TAKEN = new Set(['accepted', 'applied', 'duplicate']);

// ENDED are the run statuses whose reply has ended.
const ENDED = new Set(['completed', 'failed', 'cancelled', 'expired']);

const enc = encodeURIComponent;

// problem turns an error answer (an RFC 9457 problem with a stable code)
// into an Error.
async function problem(res) {
  let p = {};
  try {
    p = await res.json();
  } catch {
    // not JSON: status only
  }
  const err = new Error(`${res.status} ${p.code ?? ''} ${p.detail ?? p.title ?? ''}`.trim());
  err.status = res.status;
  err.code = p.code;
  return err;
}
