// VibeLearn worker dashboard: plain JavaScript, no dependencies, no build step. Everything it
// shows comes from the worker's JSON API on the same origin, re-read every REFRESH_MS.
//
// Escaping: job errors, payloads, session ids and concept names are user data. Every text goes
// into the page as a text node or an attribute value (see `el`), never through innerHTML, and
// the worker's Content-Security-Policy only lets this exact script run, so a `<script>` in a
// job error is shown as text and could not run anyway.
//
// The key: every route but health needs the user key (`<data>/worker.key`). `vl dashboard`
// opens this page with a one-time code in the URL fragment (`#code=…`, which the browser never
// sends in a request); the page removes it from the address bar, trades it for the key
// (`POST /api/dashboard/exchange`: valid once, for a minute, so the history keeps nothing that
// opens anything), keeps the key in sessionStorage and sends it as `Authorization: Bearer`.
// Without it (or when the worker refuses it) the page says how to open it and takes a pasted
// key.
//
// Failure: when the worker cannot be reached the last figures stay visible but greyed, under a
// banner saying so; the page keeps polling and says so when the worker is back, and whether it
// restarted meanwhile (a new pid or a smaller uptime).
'use strict';
(() => {
  const REFRESH_MS = 3000;
  /** A background tab polls less: nobody is looking, and each refresh is ~15 requests. */
  const HIDDEN_REFRESH_MS = 30000;
  const FETCH_TIMEOUT_MS = 5000;
  const TOKEN_KEY = 'vibelearn.adminToken';
  const USER_KEY = 'vibelearn.key';
  const STATES = ['available', 'running', 'retryable', 'held', 'succeeded', 'dead', 'cancelled'];
  const STEP_LABELS = { analyze_stack: 'stack', analyze_static: 'static', analyze_concepts: 'concepts', analyze_quiz: 'quiz', sync: 'sync' };
  const SESSIONS_SHOWN = 8;
  const FAILURES_SHOWN = 25;
  const CONCEPTS_SHOWN = 40;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);

  const view = {
    refreshes: 0, // successful refreshes, exposed on <body data-refreshes> for tests
    lastContact: null, // Date of the last successful health read
    pid: null,
    uptimeMs: null,
    down: false,
    pending: new Set(), // job ids whose replay request is in flight
    open: new Set(), // failure rows whose details are expanded
    details: new Map(), // job id -> full job (with attempts), for expanded rows
    rendered: new Map(), // section -> signature of what it last drew
  };

  // ---- DOM helpers ----------------------------------------------------------------------

  /** An element; string children become text nodes, so data is never parsed as HTML. */
  function el(tag, attrs, ...children) {
    return fill(document.createElement(tag), attrs, children);
  }

  function svg(tag, attrs, ...children) {
    return fill(document.createElementNS(SVG_NS, tag), attrs, children);
  }

  function fill(node, attrs, children) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.setAttribute('class', value);
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** Redraws a section only when its data changed, so a click is never lost to a redraw. */
  function draw(section, data, render) {
    const signature = JSON.stringify(data);
    if (view.rendered.get(section) === signature) return;
    view.rendered.set(section, signature);
    render();
  }

  function showError(container, what, error) {
    view.rendered.delete(container.id);
    container.replaceChildren(el('p', { class: 'error' }, `Could not load ${what}: ${error.message}`));
  }

  function pad(n) {
    return String(n).padStart(2, '0');
  }

  function clock(ms) {
    const d = new Date(ms);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function when(ms) {
    const d = new Date(ms);
    const today = new Date();
    const sameDay = d.toDateString() === today.toDateString();
    return sameDay ? clock(ms) : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(ms)}`;
  }

  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
    if (s < 90) return `${s} s`;
    if (s < 90 * 60) return `${Math.round(s / 60)} min`;
    if (s < 36 * 3600) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
    return `${Math.round(s / 86400)} d`;
  }

  function ago(ms) {
    return `${duration(Date.now() - ms)} ago`;
  }

  function sessionOf(lane) {
    return lane && lane.startsWith('session:') ? lane.slice('session:'.length) : lane || '';
  }

  function stateBadge(state) {
    return el('span', { class: `state st-${state || 'none'}` }, state || 'not run');
  }

  // ---- API ------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(message, status, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** One request to the worker; JSON in and out; throws ApiError (status 0 = unreachable). */
  async function api(path, { method = 'GET', body, token, accept = [] } = {}) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), FETCH_TIMEOUT_MS);
    const init = { method, headers: {}, cache: 'no-store', signal: controller.signal };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const bearer = token || sessionStorage.getItem(USER_KEY);
    if (bearer) init.headers.Authorization = `Bearer ${bearer}`;
    let response;
    let reply = null;
    try {
      response = await fetch(path, init);
      reply = await response.json().catch(() => null);
    } catch (e) {
      const why = controller.signal.aborted ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s` : 'connection failed';
      throw new ApiError(why, 0, 'unreachable');
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok && !accept.includes(response.status)) {
      const message = reply && reply.message ? reply.message : `HTTP ${response.status}`;
      throw new ApiError(message, response.status, reply && reply.error ? reply.error : 'http');
    }
    return reply;
  }

  // ---- Admin token ----------------------------------------------------------------------

  /** Asks for the token in a modal; resolves to the token or null when cancelled. */
  function askToken(problem) {
    const dialog = $('token-dialog');
    const input = $('token-input');
    const error = $('token-error');
    error.hidden = !problem;
    error.textContent = problem || '';
    input.value = '';
    return new Promise((resolve) => {
      const finish = (value) => {
        $('token-form').removeEventListener('submit', onSubmit);
        $('token-cancel').removeEventListener('click', onCancel);
        dialog.removeEventListener('cancel', onCancel);
        if (dialog.open) dialog.close();
        resolve(value);
      };
      const onSubmit = (event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (token) finish(token);
      };
      const onCancel = (event) => {
        event.preventDefault();
        finish(null);
      };
      $('token-form').addEventListener('submit', onSubmit);
      $('token-cancel').addEventListener('click', onCancel);
      dialog.addEventListener('cancel', onCancel);
      dialog.showModal();
      input.focus();
    });
  }

  /** Runs an admin request with the tab's token, asking for it once (again if refused). */
  async function withToken(request) {
    let token = sessionStorage.getItem(TOKEN_KEY);
    let problem = '';
    for (;;) {
      if (!token) {
        token = await askToken(problem);
        if (!token) return null;
      }
      try {
        const reply = await request(token);
        sessionStorage.setItem(TOKEN_KEY, token);
        renderTokenState();
        return reply;
      } catch (e) {
        if (e.status !== 403 && e.status !== 401) throw e;
        sessionStorage.removeItem(TOKEN_KEY);
        renderTokenState();
        token = null;
        problem = `The worker refused that token: ${e.message}`;
      }
    }
  }

  function renderTokenState() {
    const holder = $('token-state');
    if (sessionStorage.getItem(TOKEN_KEY)) {
      const forget = el('button', { class: 'linkish', type: 'button', onclick: () => {
        sessionStorage.removeItem(TOKEN_KEY);
        renderTokenState();
      } }, 'forget');
      holder.replaceChildren('admin token kept in this tab · ', forget);
    } else {
      holder.replaceChildren();
    }
  }

  // ---- The user key ---------------------------------------------------------------------

  /** Takes a `#code=…` fragment out of the address bar and trades it for the key. */
  async function takeCodeFromFragment() {
    const match = /^#code=([0-9a-f]+)$/.exec(location.hash);
    if (!match) return;
    history.replaceState(null, '', location.pathname + location.search);
    try {
      const reply = await api('/api/dashboard/exchange', { method: 'POST', body: { code: match[1] } });
      sessionStorage.setItem(USER_KEY, reply.key);
    } catch (e) {
      view.codeProblem = `This page's one-time code did not open it (${e.message}).`;
    }
  }

  /** Shows how to open the page with its key (and why, when the worker refused one). */
  function showKeyNeeded(problem) {
    const box = $('key-needed');
    $('key-error').hidden = !problem;
    $('key-error').textContent = problem || '';
    box.hidden = false;
    document.body.dataset.key = 'missing';
  }

  function keyAccepted() {
    $('key-needed').hidden = true;
    document.body.dataset.key = 'ok';
  }

  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('key-input').value.trim();
    if (!key) return;
    sessionStorage.setItem(USER_KEY, key);
    $('key-input').value = '';
    refreshSoon();
  });

  // ---- Connection state -----------------------------------------------------------------

  function notice(text, kind) {
    const box = $('notice');
    box.textContent = text;
    box.dataset.kind = kind || 'info';
    box.hidden = false;
    clearTimeout(notice.timer);
    notice.timer = setTimeout(() => { box.hidden = true; }, 20000);
  }

  function setDown(error) {
    view.down = true;
    document.body.dataset.conn = 'down';
    const pill = $('status-pill');
    pill.className = 'pill pill-down';
    pill.textContent = 'unreachable';
    const banner = $('banner');
    banner.className = 'banner';
    const reason = error.code === 'shutting_down' ? 'the worker is shutting down' : error.message;
    const since = view.lastContact
      ? ` Last contact ${clock(view.lastContact)} (${ago(view.lastContact)}); the figures below are from then.`
      : ' Nothing has been loaded yet.';
    banner.textContent = `Worker unreachable — retrying every ${REFRESH_MS / 1000} s (${reason}).${since} ` +
      'To start it: vl worker start';
    banner.hidden = false;
    $('updated').textContent = '';
  }

  function setUp(health) {
    const restarted = view.pid !== null && (health.pid !== view.pid || health.uptime_ms < view.uptimeMs);
    if (restarted) {
      notice(`The worker restarted (pid ${view.pid} → ${health.pid}) around ${clock(Date.now() - health.uptime_ms)}; ` +
        'the figures are current again.', 'restart');
      document.body.dataset.restarts = String(Number(document.body.dataset.restarts || 0) + 1);
    } else if (view.down) {
      notice(`Reconnected to the worker at ${clock(Date.now())}.`, 'reconnect');
    }
    view.down = false;
    view.pid = health.pid;
    view.uptimeMs = health.uptime_ms;
    view.lastContact = Date.now();
    document.body.dataset.conn = 'up';
    const pill = $('status-pill');
    pill.className = `pill ${health.status === 'ok' ? 'pill-ok' : 'pill-degraded'}`;
    pill.textContent = health.status;
    const banner = $('banner');
    // Paused providers have their own banner with a Resume button (renderPaused); their
    // notices would repeat it.
    const notices = health.paused ? [] : health.notices || [];
    // Why auto did not choose the claude CLI: not a pause, so no banner of its own.
    if (health.provider_notice) notices.unshift(health.provider_notice);
    const problems = [].concat(health.problems || [], notices, health.settings_warning ? [health.settings_warning] : [])
      .map((p) => (typeof p === 'string' ? p : p.message || JSON.stringify(p)));
    if (problems.length) {
      banner.className = 'banner degraded';
      banner.textContent = `${health.status === 'ok' ? 'Attention' : `Worker ${health.status}`}: ${problems.join('; ')}`;
      banner.hidden = false;
    } else {
      banner.hidden = true;
    }
    renderPaused(health.paused || []);
    const runner = health.runner || {};
    $('worker-facts').textContent = `v${health.version} · pid ${health.pid} · up ${duration(health.uptime_ms)}` +
      (runner.threads ? ` · ${runner.busy}/${runner.threads} threads busy` : '') +
      // The one provider decision, and what made it (issue 42): the same as vl status says.
      (health.llm ? ` · LLM ${health.llm.description} (chosen by ${health.llm.source || 'unknown'})` : '');
    $('updated').textContent = `updated ${clock(view.lastContact)}`;
  }

  /** Providers paused after refusing our credentials, each with a Resume button. */
  function renderPaused(paused) {
    draw('paused', paused.map((g) => [g.name, g.reason, g.held]), () => {
      $('paused').hidden = paused.length === 0;
      $('paused').replaceChildren(...paused.map((g) => el('div', { class: 'paused-gate', 'data-gate': g.name },
        el('span', {}, `${g.name} is paused: ${g.reason || 'refused'} — ${g.held} job${g.held === 1 ? '' : 's'} held. ` +
          `They resume ${g.resumes}.`),
        el('button', { type: 'button', 'data-testid': 'resume', 'data-resume': g.name, onclick: () => resume(g.name) },
          `Resume ${g.name}`))));
    });
  }

  async function resume(provider) {
    try {
      const reply = await withToken((token) => api('/api/jobs/resume', { method: 'POST', body: { provider }, token }));
      if (reply) {
        const r = reply.resumed;
        notice(r.gates.length ? `${provider} resumed: ${r.released} held job${r.released === 1 ? '' : 's'} released, ` +
          `${r.replayed.length} refused job${r.replayed.length === 1 ? '' : 's'} queued again.` : `${provider} was not paused any more.`);
      }
    } catch (e) {
      notice(`Resuming ${provider} failed: ${e.message}`, 'error');
    } finally {
      refreshSoon();
    }
  }

  // ---- Sections -------------------------------------------------------------------------

  function renderQueue(stats) {
    const kinds = Object.keys(stats.by_kind).sort();
    const oldest = stats.oldest_available_age_ms;
    $('queue-oldest').textContent = oldest === null || oldest === undefined ? '' : `· oldest waiting job: ${duration(oldest)}`;
    draw('queue-table', stats.by_kind, () => {
      const cell = (kind, state, n) => el('td', {
        class: `n hot-${state}${n ? '' : ' zero'}`, 'data-kind': kind, 'data-state': state, 'data-testid': 'count',
      }, String(n));
      const head = el('tr', {}, el('th', {}, 'kind'), STATES.map((s) => el('th', { class: 'n' }, s)), el('th', { class: 'n' }, 'total'));
      const rows = kinds.map((kind) => {
        const counts = stats.by_kind[kind];
        const total = STATES.reduce((sum, s) => sum + (counts[s] || 0), 0);
        return el('tr', {}, el('td', { class: 'mono' }, kind), STATES.map((s) => cell(kind, s, counts[s] || 0)),
          el('td', { class: `n${total ? '' : ' zero'}` }, String(total)));
      });
      const all = STATES.reduce((sum, s) => sum + (stats.by_state[s] || 0), 0);
      const total = el('tr', { class: 'total' }, el('td', {}, kinds.length ? 'all kinds' : 'no jobs yet'),
        STATES.map((s) => cell('*', s, stats.by_state[s] || 0)), el('td', { class: 'n', 'data-testid': 'total' }, String(all)));
      $('queue-table').replaceChildren(el('thead', {}, head), el('tbody', {}, rows, total));
    });
    // The bulk replay's kind filter: the kinds that have dead jobs.
    const select = $('bulk-kind');
    const deadKinds = kinds.filter((k) => stats.by_kind[k].dead);
    draw('bulk-kind', deadKinds, () => {
      const chosen = select.value;
      select.replaceChildren(el('option', { value: '' }, 'all kinds'),
        deadKinds.map((k) => el('option', { value: k }, `${k} (${stats.by_kind[k].dead})`)));
      select.value = deadKinds.includes(chosen) ? chosen : '';
    });
    const dead = stats.by_state.dead || 0;
    const bulk = $('bulk-replay');
    bulk.disabled = dead === 0 || bulk.dataset.busy === '1';
    $('dead-summary').textContent = dead ? `${dead} dead job${dead === 1 ? '' : 's'} in the queue` : 'no dead jobs';
  }

  /** A bar chart as inline SVG: `series` stack bottom-up; `bars` are {label, values, tip}. */
  function barChart(container, bars, series, xLabels) {
    const width = Math.max(280, container.clientWidth || 560);
    const height = 160;
    const left = 30;
    const bottom = 18;
    const plotH = height - bottom - 8;
    const max = Math.max(1, ...bars.map((b) => b.values.reduce((a, v) => a + v, 0)));
    const step = (width - left) / Math.max(1, bars.length);
    const barW = Math.max(2, step * 0.72);
    const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' });
    chart.append(svg('line', { class: 'axis', x1: left, x2: width, y1: 8 + plotH + 0.5, y2: 8 + plotH + 0.5 }));
    chart.append(svg('text', { x: left - 4, y: 12, 'text-anchor': 'end' }, String(max)));
    chart.append(svg('text', { x: left - 4, y: 8 + plotH, 'text-anchor': 'end' }, '0'));
    chart.append(svg('line', { class: 'axis', x1: left, x2: width, y1: 8.5, y2: 8.5, 'stroke-dasharray': '2 3' }));
    bars.forEach((bar, i) => {
      const x = left + i * step + (step - barW) / 2;
      let y = 8 + plotH;
      const group = svg('g', {}, svg('title', {}, bar.tip));
      bar.values.forEach((value, s) => {
        if (!value) return;
        const h = (value / max) * plotH;
        y -= h;
        group.append(svg('rect', { x: x.toFixed(1), y: y.toFixed(1), width: barW.toFixed(1), height: h.toFixed(1), fill: series[s], rx: 1 }));
      });
      // An invisible full-height target so the tooltip works over empty bars too.
      group.append(svg('rect', { x: x.toFixed(1), y: 8, width: barW.toFixed(1), height: plotH, fill: 'transparent' }));
      chart.append(group);
    });
    for (const [index, text, anchor] of xLabels) {
      chart.append(svg('text', { x: left + index * step + step / 2, y: height - 4, 'text-anchor': anchor }, text));
    }
    container.replaceChildren(chart);
  }

  function renderThroughput(data) {
    const buckets = data.buckets;
    const finished = buckets.reduce((sum, b) => sum + b.succeeded + b.dead + b.cancelled, 0);
    $('throughput-total').textContent = `· ${finished} in the last ${data.minutes} min (${(finished / data.minutes).toFixed(1)}/min)`;
    const container = $('throughput-chart');
    draw('throughput-chart', [buckets, container.clientWidth], () => {
      const bars = buckets.map((b) => ({
        values: [b.succeeded, b.dead, b.cancelled],
        tip: `${clock(b.start)}: ${b.succeeded} succeeded, ${b.dead} dead, ${b.cancelled} cancelled`,
      }));
      const last = buckets.length - 1;
      barChart(container, bars, ['var(--succeeded)', 'var(--dead)', 'var(--cancelled)'],
        [[0, clock(buckets[0].start).slice(0, 5), 'start'], [last, 'now', 'end']]);
    });
  }

  async function renderRunning(list) {
    // The list has no start time; each running job's last attempt has it (there are at most
    // as many as the runner has threads).
    const jobs = await Promise.all(list.jobs.map((job) => api(`/api/jobs/${job.id}`).catch(() => job)));
    $('running-count').textContent = jobs.length ? `· ${jobs.length}` : '';
    const rows = jobs.map((job) => {
      const attempts = job.attempts || [];
      const started = attempts.length ? attempts[attempts.length - 1].started_at : null;
      return { id: job.id, kind: job.kind, lane: job.lane, attempt: job.attempt, max: job.max_attempts, started };
    });
    draw('running', rows.map((r) => [r.id, r.attempt]), () => {
      if (!rows.length) {
        $('running').replaceChildren(el('p', { class: 'empty' }, 'No job is running.'));
        return;
      }
      const startCells = [];
      const table = el('table', {},
        el('thead', {}, el('tr', {}, ['job', 'kind', 'session', 'attempt', 'running for'].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows.map((r) => {
          const since = el('td', { 'data-started': r.started || '' }, r.started ? duration(Date.now() - r.started) : '—');
          startCells.push(since);
          return el('tr', { 'data-job': r.id }, el('td', { class: 'mono' }, `#${r.id}`), el('td', { class: 'mono' }, r.kind),
            el('td', { class: 'mono' }, sessionOf(r.lane)), el('td', {}, `${r.attempt}/${r.max}`), since);
        })));
      $('running').replaceChildren(table);
    });
    // Durations tick even when the rows did not change.
    for (const cell of $('running').querySelectorAll('td[data-started]')) {
      const started = Number(cell.dataset.started);
      if (started) cell.textContent = duration(Date.now() - started);
    }
  }

  function renderFailures(dead, retryable) {
    const rows = retryable.jobs.map((j) => ({ ...j, when: j.run_at }))
      .concat(dead.jobs.map((j) => ({ ...j, when: j.finished_at || j.run_at })))
      .slice(0, FAILURES_SHOWN * 2);
    $('failures-count').textContent = rows.length ? `· ${dead.jobs.length}${dead.next_before ? '+' : ''} dead, ` +
      `${retryable.jobs.length}${retryable.next_before ? '+' : ''} waiting to retry` : '';
    const signature = [rows.map((r) => [r.id, r.state, r.attempt, r.last_error]), [...view.pending], [...view.open],
      [...view.details.keys()]];
    draw('failures', signature, () => {
      if (!rows.length) {
        $('failures').replaceChildren(el('p', { class: 'empty' }, 'No failed jobs.'));
        return;
      }
      const body = el('tbody', {});
      for (const job of rows) {
        body.append(failureRow(job));
        if (view.open.has(job.id)) body.append(detailRow(job.id));
      }
      const head = el('tr', {}, ['job', 'kind', 'session', 'state', 'attempts', 'when', 'error', ''].map((h) => el('th', {}, h)));
      $('failures').replaceChildren(el('table', {}, el('thead', {}, head), body));
    });
  }

  function failureRow(job) {
    const error = el('div', { class: 'err mono', title: 'click to expand' }, job.last_error || '(no error recorded)');
    error.addEventListener('click', () => error.classList.toggle('open'));
    const actions = el('td', { class: 'actions' });
    if (job.state === 'dead') {
      const pending = view.pending.has(job.id);
      actions.append(el('button', {
        type: 'button', class: 'replay', 'data-replay': job.id, 'data-testid': 'replay', disabled: pending,
        onclick: () => replayOne(job.id),
      }, pending ? 'replaying…' : 'Replay'));
    }
    actions.append(' ', el('button', {
      type: 'button', class: 'linkish', 'aria-expanded': String(view.open.has(job.id)), onclick: () => toggleDetails(job.id),
    }, view.open.has(job.id) ? 'hide' : 'details'));
    const whenText = job.state === 'retryable' ? `retries ${job.when > Date.now() ? `in ${duration(job.when - Date.now())}` : 'now'}` : when(job.when);
    return el('tr', { 'data-job': job.id, 'data-state': job.state },
      el('td', { class: 'mono' }, `#${job.id}`), el('td', { class: 'mono' }, job.kind), el('td', { class: 'mono' }, sessionOf(job.lane)),
      el('td', {}, stateBadge(job.state)), el('td', {}, `${job.attempt}/${job.max_attempts}`), el('td', {}, whenText),
      el('td', {}, error), actions);
  }

  function detailRow(id) {
    const job = view.details.get(id);
    const cell = el('td', { colspan: 8 });
    if (!job) {
      cell.append(el('p', { class: 'empty' }, 'loading…'));
    } else if (job.error) {
      cell.append(el('p', { class: 'error' }, job.error));
    } else {
      const attempts = (job.attempts || []).map((a) =>
        `#${a.attempt} ${a.outcome || 'running'} at ${when(a.started_at)}` +
        (a.finished_at ? ` (${duration(a.finished_at - a.started_at)})` : '') + (a.error ? `\n   ${a.error}` : ''));
      cell.append(el('div', { class: 'small muted' }, 'payload'), el('pre', { class: 'detail' }, JSON.stringify(job.payload, null, 2)),
        el('div', { class: 'small muted' }, 'attempts'), el('pre', { class: 'detail' }, attempts.join('\n') || 'none'));
    }
    return el('tr', { class: 'detail-row' }, cell);
  }

  async function toggleDetails(id) {
    if (view.open.has(id)) {
      view.open.delete(id);
      view.details.delete(id);
    } else {
      view.open.add(id);
      api(`/api/jobs/${id}`)
        .then((job) => view.details.set(id, job))
        .catch((e) => view.details.set(id, { error: `Could not load job #${id}: ${e.message}` }))
        .finally(() => refreshSoon());
    }
    refreshSoon();
  }

  async function replayOne(id) {
    view.pending.add(id);
    refreshSoon();
    try {
      const reply = await withToken((token) => api(`/api/jobs/${id}/replay`, { method: 'POST', body: {}, token }));
      if (reply) notice(reply.replayed.length ? `Job #${id} is queued again.` : `Job #${id} was not replayable any more.`);
    } catch (e) {
      notice(`Replaying job #${id} failed: ${e.message}`, 'error');
    } finally {
      view.pending.delete(id);
      refreshSoon();
    }
  }

  async function replayDead() {
    const bulk = $('bulk-replay');
    const kind = $('bulk-kind').value;
    bulk.dataset.busy = '1';
    bulk.disabled = true;
    try {
      const body = kind ? { state: 'dead', kind } : { state: 'dead' };
      const reply = await withToken((token) => api('/api/jobs/replay', { method: 'POST', body, token }));
      if (reply) notice(`${reply.replayed.length} dead ${kind ? `${kind} ` : ''}job${reply.replayed.length === 1 ? '' : 's'} queued again.`);
    } catch (e) {
      notice(`Replaying the dead jobs failed: ${e.message}`, 'error');
    } finally {
      delete bulk.dataset.busy;
      refreshSoon();
    }
  }

  // The share of a session's questions that show its own code (issue 16): quoted, blanked or
  // mutated from its files and verified; the rest are catalogue examples or quote no code.
  function groundedCell(s) {
    const total = s.questions || 0;
    const grounded = s.grounded_questions || 0;
    const text = total ? `${Math.round((100 * grounded) / total)} %` : '—';
    return el('td', {
      class: 'n', 'data-grounded': String(grounded), 'data-questions': String(total),
      title: `${grounded} of ${total} questions show this session's own code`,
    }, text);
  }

  // A session's questions, cards and reflection prompts told apart as `vl status` and
  // `vl export` tell them (`learning::counts::Questions`).
  function questionsCell(s) {
    const reflections = s.reflections || 0;
    const title = reflections ? `${s.cards} cards, ${reflections} reflection prompt${reflections === 1 ? '' : 's'}` : '';
    return el('td', { class: 'n', 'data-questions-of': s.id, title: title || null }, s.questions);
  }

  async function renderSessions(list) {
    const sessions = list.sessions.slice(0, SESSIONS_SHOWN);
    const pipelines = await Promise.all(sessions.map((s) =>
      api(`/api/vibelearn/sessions/${encodeURIComponent(s.id)}/pipeline`).catch((e) => ({ error: e.message, steps: [] }))));
    draw('sessions', [sessions, pipelines], () => {
      if (!sessions.length) {
        $('sessions').replaceChildren(el('p', { class: 'empty' }, 'No sessions yet: they appear once the IDE hooks report one.'));
        return;
      }
      const head = el('tr', {}, ['session', 'project', 'agent', 'state', 'started', 'prompts', 'observations', 'concepts', 'questions', 'grounded', 'pipeline']
        .map((h) => el('th', {}, h)));
      const rows = sessions.map((s, i) => {
        const pipeline = pipelines[i];
        const steps = el('div', { class: 'steps' }, pipeline.error ? el('span', { class: 'error' }, pipeline.error) : null,
          pipeline.steps.map((step) => {
            // Held on a paused provider reads differently from held behind a failed step.
            const waiting = step.waiting_on || null;
            const look = waiting && waiting.gate ? 'paused' : step.state || 'none';
            const why = !waiting ? '' : waiting.gate ? `\nwaiting: ${waiting.gate} is paused (${waiting.reason || 'refused'})`
              : `\nwaiting on job #${(waiting.jobs || []).join(', #')}`;
            return el('span', {
              class: `step st-${look}`, 'data-step': step.kind, 'data-state': step.state || '', 'data-look': look,
              title: `${step.kind}: ${look === 'paused' ? 'paused' : step.state || 'not run'}` +
                (step.job_id ? ` (job #${step.job_id}, attempt ${step.attempt})` : '') + why +
                (step.last_error && step.state !== 'held' ? `\n${step.last_error}` : ''),
            }, STEP_LABELS[step.kind] || step.kind);
          }));
        return el('tr', { 'data-session': s.id },
          el('td', { class: 'mono', title: s.id }, s.id.length > 18 ? `${s.id.slice(0, 16)}…` : s.id),
          el('td', { title: s.cwd || '' }, s.project), el('td', { 'data-platform': s.platform || '' }, s.platform || '—'),
          el('td', { 'data-session-state': s.state, title: s.stuck_on ? `stopped at ${s.stuck_on.join(', ')}` : '' },
            s.state, s.ended ? el('span', { class: 'muted' }, ' · ended') : null),
          el('td', {}, when(s.started_at)), el('td', { class: 'n' }, s.prompts), el('td', { class: 'n' }, s.observations),
          el('td', { class: 'n' }, s.concepts), questionsCell(s), groundedCell(s), el('td', {}, steps));
      });
      $('sessions').replaceChildren(el('table', { class: 'num' }, el('thead', {}, head), el('tbody', {}, rows)));
    });
  }

  function renderConcepts(data) {
    const profile = data.profile;
    $('concepts-count').textContent = profile.length ? `· ${profile.length}, leeches and least recalled first` : '';
    draw('concepts', profile, () => {
      if (!profile.length) {
        $('concepts').replaceChildren(el('p', { class: 'empty' }, 'No concepts yet: they are extracted when a session is analysed.'));
        return;
      }
      // The bar is recall now (FSRS retrievability averaged over the answered cards), never
      // mastery; the standing beside it is the read model's one definition (SPEC §7): mastered
      // (two or more cards, all answered and mature, no leech), reviewing (every card answered
      // and recalled, not all mature yet), learning (cards unanswered or in their steps), gap
      // (under 70 % or a leech), as `vl gaps` and `vl status` say; answers as "correct of graded".
      const items = profile.slice(0, CONCEPTS_SHOWN).map((c) => {
        const answered = c.answered_cards;
        const score = Math.max(0, Math.min(1, c.recall_now ?? c.mastery_score));
        const fillBar = el('span', { class: c.gap ? 'low' : score < 0.85 ? 'mid' : '' });
        fillBar.style.width = `${answered ? Math.round(score * 100) : 0}%`;
        const meta = `${c.standing ?? (c.gap ? 'gap' : 'learning')} · ${c.category} · ${c.level} · ` +
          (answered ? `${c.correct_answers} correct of ${c.correct_answers + c.incorrect_answers} graded` : 'not quizzed yet') +
          (c.leeches ? ` · ${c.leeches} leech${c.leeches === 1 ? '' : 'es'} (suspended)` : '') +
          ` · met ${c.encounter_count}×`;
        return el('div', { class: 'concept', 'data-concept': c.concept_name, 'data-standing': c.standing },
          el('span', { class: 'name', title: c.concept_name }, c.concept_name),
          el('div', { class: 'bar', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.round(score * 100) }, fillBar),
          el('span', { class: 'pct', title: 'recall now' }, answered ? `${Math.round(score * 100)}% recall` : '—'),
          el('span', { class: 'meta' }, meta));
      });
      const more = profile.length > CONCEPTS_SHOWN ? el('p', { class: 'muted small' }, `and ${profile.length - CONCEPTS_SHOWN} more (vl gaps)`) : null;
      $('concepts').replaceChildren(...items, ...(more ? [more] : []));
    });
  }

  /**
   * What the page leads with: what is due now, the streak, where the concepts stand, the
   * questions and the answers, in the words `vl status` uses (the overview sends them:
   * `learning::counts`, one wording for every surface).
   */
  function renderLearning(data) {
    draw('learning', data, () => {
      const due = data.due === 1 ? '1 question due' : `${data.due} questions due`;
      const days = (n) => (n === 1 ? '1 day' : `${n} days`);
      const concepts = data.concepts === 1 ? '1 concept' : `${data.concepts} concepts`;
      $('learning').replaceChildren(
        el('div', { class: 'fact', 'data-fact': 'due' }, el('strong', {}, due),
          data.due > 0 ? el('span', { class: 'muted' }, ' — run vl quiz') : null),
        el('div', { class: 'fact', 'data-fact': 'streak' }, el('strong', {}, `streak ${days(data.streak.current)}`),
          el('span', { class: 'muted' }, ` (longest ${days(data.streak.longest)})`)),
        el('div', { class: 'fact', 'data-fact': 'concepts' }, el('strong', {}, concepts),
          data.concepts ? el('span', { class: 'muted' }, ` (${data.standings})`) : null),
        el('div', { class: 'fact', 'data-fact': 'questions' }, data.questions.words),
        el('div', { class: 'fact', 'data-fact': 'answers' }, data.answers.words));
    });
  }

  function renderActivity(data) {
    const days = data.days;
    $('activity-total').textContent = `· ${data.total_answers} answer${data.total_answers === 1 ? '' : 's'} in ${days.length} days`;
    const container = $('activity-chart');
    draw('activity-chart', [days, container.clientWidth], () => {
      // Correct, not correct, and reflections (neither right nor wrong), as `vl status` counts them.
      const bars = days.map((d) => {
        const reflections = d.reflections || 0;
        return {
          values: [d.correct, d.answers - d.correct - reflections, reflections],
          tip: `${d.day}: ${d.words || `${d.answers} answers`}`,
        };
      });
      const last = days.length - 1;
      barChart(container, bars, ['var(--ok)', '#f0a3a3', '#b8c4d6'], [[0, days[0].day.slice(5), 'start'], [last, 'today', 'end']]);
    });
  }

  // ---- The refresh loop -----------------------------------------------------------------

  async function section(container, what, load, render) {
    try {
      await render(await load());
    } catch (e) {
      if (e.status === 401) throw e; // the key: refresh() says so once, not per section
      showError($(container), what, e);
    }
  }

  async function refresh() {
    // Health first: it tells a dead worker from a failing query, and carries the pid.
    const health = await api('/api/health', { accept: [503] });
    if (health && health.error) throw new ApiError(health.message, 503, health.error); // shutting_down
    setUp(health);
    if (!sessionStorage.getItem(USER_KEY)) {
      showKeyNeeded(view.codeProblem || '');
      return;
    }
    try {
      await loadSections();
    } catch (e) {
      if (e.status !== 401) throw e;
      sessionStorage.removeItem(USER_KEY);
      showKeyNeeded(`The worker refused the key this tab had: ${e.message}`);
      return;
    }
    keyAccepted();
    view.refreshes += 1;
    document.body.dataset.refreshes = String(view.refreshes);
  }

  async function loadSections() {
    await Promise.all([
      section('learning', 'what is due', () => api('/api/vibelearn/overview'), renderLearning),
      section('queue-table', 'the queue', () => api('/api/jobs/stats'), renderQueue),
      section('throughput-chart', 'throughput', () => api('/api/jobs/throughput?minutes=15'), renderThroughput),
      section('running', 'running jobs', () => api('/api/jobs?state=running&limit=20'), renderRunning),
      section('failures', 'failures', () => Promise.all([
        api(`/api/jobs?state=dead&limit=${FAILURES_SHOWN}`), api(`/api/jobs?state=retryable&limit=${FAILURES_SHOWN}`),
      ]), ([dead, retryable]) => renderFailures(dead, retryable)),
      section('sessions', 'sessions', () => api(`/api/sessions?limit=${SESSIONS_SHOWN}`), renderSessions),
      section('concepts', 'concepts', () => api('/api/vibelearn/profile'), renderConcepts),
      section('activity-chart', 'quiz activity', () => api('/api/vibelearn/activity?days=30'), renderActivity),
    ]);
  }

  // One refresh at a time: a request for one while another runs (an action finished) makes the
  // loop go round once more instead of overlapping; the next tick is scheduled only after.
  const loop = { running: false, again: false, timer: null };

  async function refreshNow() {
    if (loop.running) {
      loop.again = true;
      return;
    }
    loop.running = true;
    clearTimeout(loop.timer);
    do {
      loop.again = false;
      try {
        await refresh();
      } catch (e) {
        setDown(e);
      }
    } while (loop.again);
    loop.running = false;
    loop.timer = setTimeout(refreshNow, document.hidden ? HIDDEN_REFRESH_MS : REFRESH_MS);
  }

  /** After an action: refresh now rather than at the next tick. */
  function refreshSoon() {
    refreshNow();
  }

  $('bulk-replay').addEventListener('click', replayDead);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) refreshNow(); });
  window.addEventListener('hashchange', () => { takeCodeFromFragment().then(refreshSoon); });
  renderTokenState();
  takeCodeFromFragment().then(refreshNow);
})();
