// Validates a UI message stream with the Vercel AI SDK itself (the `ai`
// package pinned in package-lock.json):
//   - the SSE framing: every chunk has an id, ids never repeat, [DONE] ends
//     the stream exactly once (unless --no-done);
//   - every chunk against the SDK's uiMessageChunkSchema, and field by field
//     against the fields that schema declares for the chunk's type (the
//     SDK's objects accept unknown fields; ours must not send any);
//   - the whole stream through readUIMessageStream, which fails on chunks
//     out of order (a delta without its start, an output for an unknown tool
//     call, ...).
//
// Usage: node check.mjs [--header 'Name: value']... [--timeout-ms N] [--no-done]
//                       (--url URL | --file PATH)...
// Every target is checked (URLs with the headers). On success it prints a
// JSON array on stdout, one summary per target (chunk counts and the final
// messages); on failure it prints the problems on stderr and exits 1.
import { readFile } from 'node:fs/promises';
import { readUIMessageStream, uiMessageChunkSchema } from 'ai';

// Fields of ai@6's uiMessageChunkSchema, per chunk type (besides "type").
const declared = {
  'text-start': ['id', 'providerMetadata'],
  'text-delta': ['id', 'delta', 'providerMetadata'],
  'text-end': ['id', 'providerMetadata'],
  'error': ['errorText'],
  'tool-input-start': ['toolCallId', 'toolName', 'inputEncoding', 'providerExecuted', 'providerMetadata', 'toolMetadata', 'dynamic', 'title'],
  'tool-input-delta': ['toolCallId', 'inputTextDelta'],
  'tool-input-available': ['toolCallId', 'toolName', 'input', 'providerExecuted', 'providerMetadata', 'toolMetadata', 'dynamic', 'title'],
  'tool-input-error': ['toolCallId', 'toolName', 'input', 'providerExecuted', 'providerMetadata', 'toolMetadata', 'dynamic', 'errorText', 'title'],
  'tool-approval-request': ['approvalId', 'toolCallId', 'approvalDescriptor', 'inputSchemaInput', 'signature'],
  'tool-output-available': ['toolCallId', 'output', 'providerExecuted', 'providerMetadata', 'toolMetadata', 'dynamic', 'preliminary'],
  'tool-output-error': ['toolCallId', 'errorText', 'providerExecuted', 'providerMetadata', 'toolMetadata', 'dynamic'],
  'tool-output-denied': ['toolCallId'],
  'reasoning-start': ['id', 'providerMetadata'],
  'reasoning-delta': ['id', 'delta', 'providerMetadata'],
  'reasoning-end': ['id', 'providerMetadata'],
  'source-url': ['sourceId', 'url', 'title', 'providerMetadata'],
  'source-document': ['sourceId', 'mediaType', 'title', 'filename', 'providerMetadata'],
  'file': ['url', 'mediaType', 'providerMetadata'],
  'data-*': ['id', 'data', 'transient'],
  'start-step': [],
  'finish-step': [],
  'start': ['messageId', 'messageMetadata'],
  'finish': ['finishReason', 'messageMetadata'],
  'abort': ['reason'],
  'message-metadata': ['messageMetadata'],
};

function parseArgs(argv) {
  const opts = { headers: {}, timeoutMs: 60000, done: true, targets: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--url') opts.targets.push({ url: argv[++i] });
    else if (a === '--file') opts.targets.push({ file: argv[++i] });
    else if (a === '--timeout-ms') opts.timeoutMs = Number(argv[++i]);
    else if (a === '--no-done') opts.done = false;
    else if (a === '--header') {
      const h = argv[++i];
      const at = h.indexOf(':');
      opts.headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
    } else throw new Error(`unknown argument ${a}`);
  }
  if (opts.targets.length === 0) throw new Error('give at least one --url or --file');
  return opts;
}

async function readStream(target, opts, problems) {
  if (target.file) return readFile(target.file, 'utf8');
  const res = await fetch(target.url, { headers: opts.headers, signal: AbortSignal.timeout(opts.timeoutMs) });
  if (res.status !== 200) problems.push(`HTTP ${res.status}: ${await res.text()}`);
  const ct = res.headers.get('content-type') ?? '';
  if (!ct.startsWith('text/event-stream')) problems.push(`content-type is ${ct}`);
  const marker = res.headers.get('x-vercel-ai-ui-message-stream');
  if (marker !== 'v1') problems.push(`x-vercel-ai-ui-message-stream is ${marker}`);
  return res.text();
}

// parseSSE returns the stream's events as {id, data}; comments are skipped.
function parseSSE(text) {
  const out = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    let id = null;
    const data = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const at = line.indexOf(':');
      const field = at < 0 ? line : line.slice(0, at);
      let value = at < 0 ? '' : line.slice(at + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) out.push({ id, data: data.join('\n') });
  }
  return out;
}

async function checkChunks(events, opts, problems) {
  const schema = uiMessageChunkSchema();
  const chunks = [];
  const seen = new Set();
  let done = 0;
  for (const [i, ev] of events.entries()) {
    if (ev.data === '[DONE]') {
      done++;
      if (i !== events.length - 1) problems.push('[DONE] is not the last event');
      continue;
    }
    if (ev.id === null) problems.push(`chunk ${i} has no id`);
    else if (seen.has(ev.id)) problems.push(`id ${ev.id} repeats`);
    seen.add(ev.id);
    let chunk;
    try {
      chunk = JSON.parse(ev.data);
    } catch (e) {
      problems.push(`chunk ${i} (id ${ev.id}) is not JSON: ${e.message}`);
      continue;
    }
    const r = await schema.validate(chunk);
    if (!r.success) problems.push(`chunk ${i} (id ${ev.id}) fails the SDK schema: ${String(r.error?.message ?? r.error).slice(0, 400)} ${ev.data}`);
    const key = typeof chunk.type === 'string' && chunk.type.startsWith('data-') ? 'data-*' : chunk.type;
    for (const field of Object.keys(chunk)) {
      if (field !== 'type' && !(declared[key] ?? []).includes(field)) {
        problems.push(`chunk ${i} (id ${ev.id}): field ${field} is not declared for ${chunk.type}`);
      }
    }
    chunks.push(chunk);
  }
  if (opts.done && done !== 1) problems.push(`[DONE] appears ${done} times, want once`);
  if (!opts.done && done !== 0) problems.push(`[DONE] appears ${done} times in a stream that must not end`);
  return chunks;
}

// readMessages runs the chunks through the SDK's own message builder and
// returns each message's final state.
async function readMessages(chunks, problems) {
  const errorTexts = new Set(chunks.filter((c) => c.type === 'error').map((c) => c.errorText));
  const stream = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  const messages = new Map();
  const onError = (e) => {
    if (!errorTexts.has(e?.message)) problems.push(`readUIMessageStream: ${e?.message ?? e}`);
  };
  for await (const m of readUIMessageStream({ stream, onError })) messages.set(m.id, m);
  return [...messages.values()];
}

function summarize(chunks, messages) {
  const types = {};
  for (const c of chunks) types[c.type] = (types[c.type] ?? 0) + 1;
  return {
    chunks: chunks.length,
    types,
    messages: messages.map((m) => ({
      id: m.id,
      metadata: m.metadata,
      parts: m.parts.map((p) => ({
        type: p.type, state: p.state, text: p.text, toolName: p.toolName, toolCallId: p.toolCallId,
        input: p.input, output: p.output, errorText: p.errorText, approval: p.approval, id: p.id, data: p.data,
      })),
    })),
  };
}

async function check(target, opts) {
  const problems = [];
  const text = await readStream(target, opts, problems);
  const chunks = await checkChunks(parseSSE(text), opts, problems);
  const messages = await readMessages(chunks, problems);
  return { problems, summary: summarize(chunks, messages) };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const results = await Promise.all(opts.targets.map((t) => check(t, opts)));
  const problems = results.flatMap((r, i) => r.problems.map((p) => `${opts.targets[i].url ?? opts.targets[i].file}: ${p}`));
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  console.log(JSON.stringify(results.map((r) => r.summary)));
}

main().catch((e) => {
  console.error(e?.stack ?? String(e));
  process.exit(1);
});
