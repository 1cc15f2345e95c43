// Drives the chat page in headless Chromium (playwright-core; the browser is
// the system's, never downloaded) and prints what it saw as JSON on stdout.
// Every wait is for a state of the page, bounded by --timeout-ms; a wait that
// runs out fails the drive with a screenshot (failure.png).
//
// Usage: node drive.mjs --url PAGE --other-origin-url PAGE --api URL
//                       --artifacts DIR --prompt TEXT --end TEXT --follow-up TEXT
//                       [--timeout-ms N]
//
// 1. send --prompt and watch the reply stream (the lengths its first text
//    part went through);
// 2. click Approve on the tool call that waits for approval, see it run;
// 3. reload while the reply's last text streams (before --end shows), and
//    see the reply resume and reach --end;
// 4. send --follow-up and see the session's next reply start;
// 5. from the page's origin, and from --other-origin-url's, call --api
//    directly: what a cross-origin page can read.
import { parseArgs, run, screenshots } from './lib.mjs';

const opts = parseArgs(process.argv.slice(2), { required: ['url', 'otherOriginUrl', 'api', 'artifacts', 'prompt', 'end', 'followUp'] });
const { shots, shot } = screenshots(opts.artifacts);
const result = { screenshots: shots };

const reply = '.message[data-role=assistant]';

// replyText is the text of the reply's text parts, in order.
const replyText = (page) => page.evaluate((sel) =>
  [...document.querySelectorAll(`${sel} .text`)].map((e) => e.textContent).join('\n'), reply);

const status = (page) => page.locator('#status').textContent();

async function chat(page) {
  await page.goto(opts.url);
  await page.locator('#status', { hasText: 'ready' }).waitFor();
  await shot(page, 'ready');
  // Record every length the reply's first text part goes through.
  await page.evaluate((sel) => {
    window.lengths = [];
    new MutationObserver(() => {
      const t = document.querySelector(`${sel} .text`);
      const n = t ? t.textContent.length : 0;
      if (n > 0 && window.lengths.at(-1) !== n) window.lengths.push(n);
    }).observe(document.getElementById('root'), { subtree: true, childList: true, characterData: true });
  }, reply);
  await page.fill('#prompt', opts.prompt);
  await page.click('#send');
  await page.locator(`${reply} .text`).first().waitFor();
  await shot(page, 'streaming');

  const approve = page.locator(`${reply} .approve`);
  await approve.waitFor();
  result.lengths = await page.evaluate(() => window.lengths);
  result.statusWhilePaused = await status(page);
  await shot(page, 'approval-requested');
  await approve.click();
  await page.locator(`${reply} .tool[data-state=output-available]`).waitFor();
  result.runId = await page.locator(reply).getAttribute('data-id');

  // The reply's last text part is streaming: reload in the middle of it.
  await page.locator(`${reply} .text`).nth(1).waitFor();
  await page.waitForFunction((sel) => document.querySelectorAll(`${sel} .text`)[1]?.textContent.length >= 40, reply);
  result.beforeReload = await replyText(page);
  result.statusBeforeReload = await status(page);
  await shot(page, 'before-reload');
  await page.reload();

  // The resumed reply holds what was shown before the reload, and more.
  await page.waitForFunction(([sel, before]) =>
    [...document.querySelectorAll(`${sel} .text`)].map((e) => e.textContent).join('\n').startsWith(before),
  [reply, result.beforeReload]);
  result.resumedRunId = await page.locator(reply).getAttribute('data-id');
  await shot(page, 'resumed');
  await page.locator(`${reply} .text`, { hasText: opts.end }).waitFor();
  await page.locator('#status', { hasText: 'ready' }).waitFor();
  result.finalText = await replyText(page);
  result.toolStates = await page.locator(`${reply} .tool`).evaluateAll((ts) => ts.map((t) => t.dataset.state));
  await shot(page, 'done');

  // The next message is the session's next run, a reply of its own.
  await page.fill('#prompt', opts.followUp);
  await page.click('#send');
  const next = page.locator(reply).nth(1);
  await next.locator('.approve').waitFor();
  result.followUpRunId = await next.getAttribute('data-id');
  await shot(page, 'follow-up');
}

// probe calls the API directly from the page's origin: a simple GET and a
// request that needs a preflight (a bearer token and a JSON body).
const probe = (page) => page.evaluate(async (api) => {
  const attempt = async (f) => {
    try {
      return String((await f()).status);
    } catch (err) {
      return err.name;
    }
  };
  return {
    origin: location.origin,
    health: await attempt(() => fetch(`${api}/healthz`)),
    preflighted: await attempt(() => fetch(`${api}/v1/runs`, {
      method: 'POST', headers: { Authorization: 'Bearer not-a-token', 'Content-Type': 'application/json' }, body: '{}',
    })),
  };
}, opts.api);

async function cors(page) {
  result.cors = [await probe(page)];
  await page.goto(opts.otherOriginUrl);
  result.cors.push(await probe(page));
}

await run({
  artifacts: opts.artifacts, timeoutMs: opts.timeoutMs, result, shot,
  steps: async (page) => {
    await chat(page);
    await cors(page);
  },
});
