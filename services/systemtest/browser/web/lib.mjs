// What the browser drives (drive.mjs, im.mjs) share: their arguments, their
// numbered screenshots, and running Chromium (playwright-core; the system's
// browser, never downloaded) with the JSON report on stdout.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

// parseArgs reads `--some-name value` pairs into { someName: value };
// --timeout-ms is a number (default 60000), each of flags takes no value
// (false unless given), and every name of required must be given.
export function parseArgs(argv, { flags = [], required = [] } = {}) {
  const o = { timeoutMs: 60000 };
  for (const f of flags) o[f] = false;
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, '').replace(/-(.)/g, (_, c) => c.toUpperCase());
    if (flags.includes(name)) { o[name] = true; continue; }
    o[name] = name === 'timeoutMs' ? Number(argv[i + 1]) : argv[i + 1];
    i++;
  }
  for (const k of required) {
    if (!o[k]) throw new Error(`missing --${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}`);
  }
  return o;
}

// screenshots saves full-page screenshots in dir, numbered in the order
// taken; shots lists their paths.
export function screenshots(dir) {
  const shots = [];
  const shot = async (page, name) => {
    const path = join(dir, `${String(shots.length + 1).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    shots.push(path);
  };
  return { shots, shot };
}

// run opens a page in headless Chromium and runs steps(page), each wait
// bounded by timeoutMs. It prints result, with the page's console, as JSON
// on stdout; a failing step prints its error and the console on stderr,
// takes the screenshot "failure" and sets the exit code.
export async function run({ artifacts, timeoutMs, result, shot, steps }) {
  await mkdir(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.XBOT_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  page.setDefaultTimeout(timeoutMs);
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
  let failed = false;
  try {
    await steps(page);
  } catch (err) {
    failed = true;
    console.error(`drive: ${err.stack ?? err}`);
    console.error(`page console:\n${consoleLines.join('\n')}`);
    await shot(page, 'failure').catch(() => {});
  } finally {
    await browser.close();
  }
  result.console = consoleLines;
  process.stdout.write(JSON.stringify(result));
  process.exitCode = failed ? 1 : 0;
}
