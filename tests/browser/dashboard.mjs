// Drives the worker dashboard in Debian's headless Chromium (playwright-core; no downloaded
// browser) for tests/dashboard.rs, which prepared the worker and its database.
//
//   node dashboard.mjs --url file:///…/dashboard.html --bare http://127.0.0.1:PORT/ --token TOKEN
//                      --out DIR [--dead-job ID] [--bulk]
//                      [--resume PROVIDER] [--restart]
//
// Talks to the Rust test as JSON lines on stdout, each {"event": ...}:
//   no_key        a tab opened at the bare address: it says how to open the page
//   code_spent    the opener file opened a second time: its one-time code no longer opens it
//   loaded        the counts the page shows, its failure rows, console errors so far
//   details       the dead job's expanded payload, as the page shows it
//   replayed      after clicking the dead job's Replay and giving the token in the dialog
//   bulk_replayed (--bulk) after "Replay all dead", which must not ask for the token again
//   resumed       (--resume) after the paused provider's Resume button: the banner is gone
//   kill_worker   (--restart) the test should stop the worker now
//   down_shown    the "unreachable" banner is up; the test should start the worker again
//   restart_shown the page noticed the new worker and says so
//   done          final: screenshots written, console errors over the whole run
//   error         something failed (exit status 1)
// The test answers nothing on stdin; it acts on the events and the page notices by polling.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const WAIT_MS = 20_000;

function parseArgs(argv) {
  const args = { restart: false, bulk: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--restart') args.restart = true;
    else if (flag === '--bulk') args.bulk = true;
    else if (['--url', '--bare', '--token', '--out', '--dead-job', '--resume'].includes(flag)) args[flag.slice(2)] = argv[++i];
    else throw new Error(`unknown argument ${flag}`);
  }
  for (const required of ['url', 'token', 'out']) {
    if (!args[required]) throw new Error(`--${required} is required`);
  }
  return args;
}

function emit(event, fields = {}) {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

/** The page's total for `state`, or NaN before the table is drawn. */
async function shownTotal(page, state) {
  return page.$eval(`#queue-table td[data-kind="*"][data-state="${state}"]`, (td) => Number(td.textContent))
    .catch(() => Number.NaN);
}

/**
 * Waits until the page's totals show nothing waiting or running: its counts are final. `dead`,
 * when given, is the dead total the page must show too: after a replay, the table drawn before
 * it also shows nothing waiting, and the sections redraw one by one, so the failure row can
 * leave while the queue table is still the old one.
 */
async function settled(page, dead) {
  await page.waitForFunction((dead) => {
    const total = (state) => document.querySelector(`#queue-table td[data-kind="*"][data-state="${state}"]`)?.textContent;
    return ['available', 'running', 'retryable'].every((state) => total(state) === '0')
      && (dead === undefined || total('dead') === String(dead));
  }, dead, { timeout: WAIT_MS });
}

/** The queue table as the page shows it: {by_state, by_kind}. */
async function shownCounts(page) {
  const cells = await page.$$eval('#queue-table td[data-testid=count]', (tds) =>
    tds.map((td) => ({ kind: td.dataset.kind, state: td.dataset.state, n: Number(td.textContent) })));
  const counts = { by_state: {}, by_kind: {} };
  for (const { kind, state, n } of cells) {
    if (kind === '*') counts.by_state[state] = n;
    else (counts.by_kind[kind] ??= {})[state] = n;
  }
  return counts;
}

async function failureRows(page) {
  return page.$$eval('#failures tr[data-job]', (rows) => rows.map((row) => ({
    id: Number(row.dataset.job),
    state: row.dataset.state,
    error: row.querySelector('.err')?.textContent ?? '',
    replay_button: Boolean(row.querySelector('button[data-replay]')),
  })));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(args.out, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'vl-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const consoleErrors = [];
  try {
    const page = context.pages()[0] ?? await context.newPage();
    // The page logs nothing on purpose; an error here is a CSP refusal or a script bug, except
    // the failed fetches of the deliberate restart (Chromium logs those itself).
    page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });
    page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));

    // First a tab opened without the key (the plain address): it says how to open the page
    // and loads no data.
    const bare = await context.newPage();
    await bare.goto(args.bare ?? args.url.split('#')[0]);
    await bare.waitForFunction(() => document.body.dataset.key === 'missing', null, { timeout: WAIT_MS });
    emit('no_key', {
      shown: await bare.isVisible('#key-needed'),
      text: await bare.textContent('#key-needed'),
      loaded_anything: await bare.evaluate(() => Number(document.body.dataset.refreshes || 0) > 0
        || document.querySelectorAll('#queue-table tr').length > 0),
    });
    await bare.close();

    await page.goto(args.url);
    await page.waitForFunction(() => Number(document.body.dataset.refreshes || 0) >= 1, null, { timeout: WAIT_MS });
    // A second full refresh: running-job details and pipelines load within a refresh, but
    // this proves the loop goes on.
    await page.waitForFunction(() => Number(document.body.dataset.refreshes || 0) >= 2, null, { timeout: WAIT_MS });
    const failures = await failureRows(page);
    // The same opener again (what the history or the data dir still holds): its code is spent.
    const again = await context.newPage();
    await again.goto(args.url);
    await again.waitForFunction(() => document.body.dataset.key === 'missing', null, { timeout: WAIT_MS });
    emit('code_spent', {
      text: await again.textContent('#key-needed'),
      key_kept: await again.evaluate(() => Boolean(sessionStorage.getItem('vibelearn.key'))),
      address: again.url(),
    });
    await again.close();
    emit('loaded', {
      address: page.url(),
      key_kept: await page.evaluate(() => Boolean(sessionStorage.getItem('vibelearn.key'))),
      counts: await shownCounts(page),
      status: await page.textContent('#status-pill'),
      banner: await page.isVisible('#banner') ? await page.textContent('#banner') : null,
      failures,
      sections: await page.$$eval('main > section', (cards) => cards.map((c) => c.id)),
      learning: await page.$$eval('#learning [data-fact]', (facts) => Object.fromEntries(facts.map((f) => [f.dataset.fact, f.textContent]))),
      sessions: await page.$$eval('#sessions tr[data-session]', (rows) => rows.map((r) => ({
        id: r.dataset.session,
        state: r.querySelector('[data-session-state]')?.dataset.sessionState ?? null,
        steps: Object.fromEntries([...r.querySelectorAll('[data-step]')].map((s) => [s.dataset.step, s.dataset.state])),
        looks: Object.fromEntries([...r.querySelectorAll('[data-step]')].map((s) => [s.dataset.step, s.dataset.look])),
        grounded: r.querySelector('[data-grounded]')?.textContent ?? null,
        grounded_title: r.querySelector('[data-grounded]')?.title ?? null,
      }))),
      paused: await page.isVisible('#paused') ? await page.textContent('#paused') : null,
      concepts: await page.$$eval('#concepts [data-concept]', (items) => items.map((item) => ({
        name: item.dataset.concept,
        percent: item.querySelector('.pct').textContent,
        bar_width: item.querySelector('.bar > span').style.width,
      }))),
      activity_bars: await page.$$eval('#activity-chart rect[fill^="var(--ok)"]', (rects) => rects.length),
      throughput_bars: await page.$$eval('#throughput-chart rect[fill^="var(--"]', (rects) => rects.length),
      injected_script_ran: await page.evaluate(() => Boolean(window.__vl_xss)),
      console_errors: [...consoleErrors],
    });
    await page.screenshot({ path: join(args.out, 'dashboard.png'), fullPage: true });

    if (args['dead-job']) {
      const id = Number(args['dead-job']);
      await page.click(`#failures tr[data-job="${id}"] button[aria-expanded]`);
      const detail = await page.waitForSelector('#failures tr.detail-row pre', { timeout: WAIT_MS });
      emit('details', { payload: await detail.textContent() });
      const deadBefore = await shownTotal(page, 'dead');
      await page.click(`button[data-replay="${id}"]`);
      await page.waitForSelector('#token-dialog[open]', { timeout: WAIT_MS });
      await page.fill('[data-testid=token-input]', args.token);
      await page.click('[data-testid=token-ok]');
      // Replayed: the row leaves the failures table, and the job runs.
      await page.waitForSelector(`#failures tr[data-job="${id}"]`, { state: 'detached', timeout: WAIT_MS });
      await settled(page, deadBefore - 1);
      emit('replayed', {
        job: id,
        notice: await page.textContent('#notice'),
        token_kept: await page.evaluate(() => Boolean(sessionStorage.getItem('vibelearn.adminToken'))),
        counts: await shownCounts(page),
      });
    }

    if (args.bulk) {
      await page.click('[data-testid=bulk-replay]');
      const asked = await page.waitForSelector('#token-dialog[open]', { timeout: 1000 }).then(() => true, () => false);
      if (asked) {
        await page.fill('[data-testid=token-input]', args.token);
        await page.click('[data-testid=token-ok]');
      }
      await page.waitForFunction(() => !document.querySelector('#failures tr[data-job]'), null, { timeout: WAIT_MS });
      await settled(page, 0);
      emit('bulk_replayed', { asked_for_token: asked, notice: await page.textContent('#notice'), counts: await shownCounts(page) });
    }
    if (args.resume) {
      await page.click(`[data-resume="${args.resume}"]`);
      const asked = await page.waitForSelector('#token-dialog[open]', { timeout: 1000 }).then(() => true, () => false);
      if (asked) {
        await page.fill('[data-testid=token-input]', args.token);
        await page.click('[data-testid=token-ok]');
      }
      await page.waitForSelector('#paused', { state: 'hidden', timeout: WAIT_MS });
      await settled(page);
      emit('resumed', { notice: await page.textContent('#notice') });
    }
    await page.screenshot({ path: join(args.out, 'dashboard-after-replay.png'), fullPage: true });

    if (args.restart) {
      emit('kill_worker');
      await page.waitForFunction(() => document.body.dataset.conn === 'down', null, { timeout: WAIT_MS });
      const banner = await page.textContent('#banner');
      await page.screenshot({ path: join(args.out, 'dashboard-worker-down.png'), fullPage: true });
      emit('down_shown', { banner, banner_visible: await page.isVisible('#banner') });
      await page.waitForFunction(() => document.body.dataset.conn === 'up' && Number(document.body.dataset.restarts || 0) >= 1,
        null, { timeout: WAIT_MS * 2 });
      emit('restart_shown', { notice: await page.textContent('#notice'), banner_visible: await page.isVisible('#banner') });
    }
    emit('done', { console_errors: consoleErrors });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((error) => {
  emit('error', { message: String(error && error.stack ? error.stack : error) });
  process.exit(1);
});
