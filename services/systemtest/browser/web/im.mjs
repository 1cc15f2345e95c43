// Drives the IM gateway's sandbox chat page (services/imgateway/web) in
// headless Chromium (playwright-core; the system's browser, never
// downloaded) and prints what it saw as JSON on stdout. Every wait is for a
// state of the page, bounded by --timeout-ms; a wait that runs out fails the
// drive with a screenshot (failure.png).
//
// Usage: node im.mjs --url PAGE --artifacts DIR --prompt TEXT --allow LABEL
//                    --final TEXT --tool-output TEXT [--closes] [--replace]
//                    [--timeout-ms N]
//
// 1. open the page (its ?token= included) and see the ready frame;
// 2. send --prompt and record the reply frames as they arrive, up to an
//    approval request with a button labelled --allow;
// 3. press it and see the reply frames up to one holding --final;
// 4. once the history route has the final answer too (the read model is a
//    view of its own), reload and see the conversation's history, the tool
//    call's output (--tool-output) in it;
// 5. with --closes: open the group conversation "team", send to it and see
//    its reply there; back in the private one, send "/close 1012" (the endpoint of the page test closes
//    the socket with that code) and see the page reconnect, then
//    "/close 4000" and see it wait for a click on Reconnect; "/error" and see
//    the error frame;
// 6. with --replace: open the page in a second tab, which takes the endpoint,
//    and see the first tab closed 4000 and waiting for a click on Reconnect.
import { parseArgs, run, screenshots } from './lib.mjs';

const opts = parseArgs(process.argv.slice(2), {flags: ['closes', 'replace'], required: ['url', 'artifacts', 'prompt', 'allow', 'final', 'toolOutput'] });
const { shots, shot } = screenshots(opts.artifacts);
const result = { screenshots: shots };

const current = '.conversation:not([hidden])';
const bot = `${current} .message[data-from=bot]`;

// botTexts is the text of the current conversation's bot messages, in order.
const botTexts = (page) => page.locator(bot).evaluateAll((ms) => ms.map((m) =>
  [...m.querySelectorAll('.text, .tool, .actions')].map((e) => e.textContent).join(' ')));

async function ready(page) {
  await page.locator('#status[data-state=ready]').waitFor();
  return {
    endpoint: await page.locator('#endpoint').textContent(),
    canExecute: await page.locator('#can-execute').textContent(),
    shellIsolation: await page.locator('#shell-isolation').textContent(),
  };
}

async function send(page, text) {
  await page.fill('#prompt', text);
  await page.click('#send');
}

async function chat(page) {
  // Record every frame the page sends and every bot message as it appears.
  await page.addInitScript(() => {
    window.sent = [];
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) { window.sent.push(String(data)); return send.call(this, data); };
  });
  await page.goto(opts.url);
  result.ready = await ready(page);
  await shot(page, 'ready');
  await page.evaluate(() => {
    window.arrived = [];
    new MutationObserver((records) => {
      for (const r of records) for (const n of r.addedNodes) {
        if (n.nodeType === 1 && n.matches('.message[data-from=bot]')) window.arrived.push(n.textContent);
      }
    }).observe(document.getElementById('log'), { subtree: true, childList: true });
  });
  await send(page, opts.prompt);
  const allow = page.locator(`${bot} button.action`, { hasText: new RegExp(`^${opts.allow}$`) });
  await allow.first().waitFor();
  result.beforeAllow = await botTexts(page);
  await shot(page, 'approval-requested');
  await allow.first().click();
  await page.locator(bot, { hasText: opts.final }).first().waitFor();
  result.afterAllow = await botTexts(page);
  result.arrived = await page.evaluate(() => window.arrived);
  result.sent = await page.evaluate(() => window.sent);
  await shot(page, 'final-answer');

  // The outbox and the read model are separate views of the log: wait until
  // the history route has the final answer too, then reload.
  await page.waitForFunction(async (final) => {
    const q = new URLSearchParams({ type: document.getElementById('conv-type').value, id: document.getElementById('conv-id').value });
    const token = new URLSearchParams(location.search).get('token');
    const res = await fetch(`${location.pathname}/history?${q}`, { headers: { Authorization: `Bearer ${token}` } });
    return res.ok && (await res.text()).includes(final);
  }, opts.final, { polling: 250 });
  await page.reload();
  await ready(page);
  await page.locator(`${current} .message.history .tool-output`, { hasText: opts.toolOutput }).first().waitFor();
  await page.locator(`${current} .message.history`, { hasText: opts.final }).first().waitFor();
  result.history = await page.locator(`${current} .message.history`).evaluateAll((ms) => ms.map((m) => ({
    from: m.dataset.from, text: [...m.querySelectorAll('.text, .tool')].map((e) => e.textContent).join(' '),
  })));
  await shot(page, 'history-after-reload');
}

// conversations opens the group conversation "team", sends to it and sees
// its reply there, with the private conversation hidden; then goes back.
async function conversations(page) {
  await page.selectOption('#conv-type', 'group');
  await page.fill('#conv-id', 'team');
  await page.click('#open');
  await send(page, 'hello team');
  await page.locator('.conversation[data-conversation="group:team"] .message[data-from=bot]').first().waitFor();
  result.groupSent = (await page.evaluate(() => window.sent)).at(-1);
  result.privateHidden = await page.locator('.conversation[data-conversation^="private:"]').isHidden();
  await shot(page, 'group-conversation');
  await page.locator('#conversations button', { hasText: 'private' }).click();
}

async function closes(page) {
  result.statuses = [];
  await send(page, '/close 1012');
  await page.locator('#status', { hasText: 'closed 1012' }).waitFor();
  result.statuses.push(await page.locator('#status').textContent());
  await ready(page); // reconnected on its own
  result.statuses.push(await page.locator('#status').textContent());
  await shot(page, 'reconnected-after-1012');
  await send(page, '/error');
  await page.locator(`${current} .message[data-from=error]`).first().waitFor();
  result.error = await page.locator(`${current} .message[data-from=error] .text`).first().textContent();
  await send(page, '/close 4000');
  await page.locator('#status', { hasText: 'closed 4000' }).waitFor();
  result.statuses.push(await page.locator('#status').textContent());
  await page.locator('#reconnect').waitFor();
  await shot(page, 'replaced-4000');
  await page.click('#reconnect');
  await ready(page);
  result.statuses.push(await page.locator('#status').textContent());
}

async function replace(page) {
  const other = await page.context().browser().newPage({ viewport: { width: 900, height: 600 } });
  other.setDefaultTimeout(opts.timeoutMs);
  await other.goto(opts.url);
  await ready(other);
  await page.locator('#status', { hasText: 'closed 4000' }).waitFor();
  await page.locator('#reconnect').waitFor();
  result.replaced = await page.locator('#status').textContent();
  await shot(page, 'replaced-by-another-tab');
  result.otherStatus = await other.locator('#status').textContent();
  await other.close();
}

await run({
  artifacts: opts.artifacts, timeoutMs: opts.timeoutMs, result, shot,
  steps: async (page) => {
    await chat(page);
    if (opts.closes) {
      await conversations(page);
      await closes(page);
    }
    if (opts.replace) await replace(page);
  },
});
