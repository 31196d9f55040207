// onceonly dashboard: reads /v1/dashboard/stream (Server-Sent Events, read
// with fetch so a tenant token goes in the Authorization header) and renders
// each snapshot. No framework, no build step.
import { explain } from './explain.js';

const $ = (sel) => document.querySelector(sel);
const KINDS = ['CREATE', 'SUPPRESS', 'UPDATE', 'provisional'];
const COLORS = { CREATE: 'var(--create)', SUPPRESS: 'var(--suppress)', UPDATE: 'var(--update)', provisional: 'var(--provisional)' };
const history = []; // [{t, rates}] last 120 s
let previous = null;
let token = sessionStorage.getItem('onceonly-token') || '';
let sort = { key: 'last_seen_at', desc: true };
let last = null;

const headers = () => (token ? { authorization: `Bearer ${token}` } : {});
const text = (v) => document.createTextNode(v == null ? '' : String(v));
function cell(row, value, cls) {
  const td = document.createElement('td');
  if (cls) td.className = cls;
  td.appendChild(value instanceof Node ? value : text(value));
  row.appendChild(td);
}
function status(label, ok) {
  const s = $('#status');
  s.textContent = label;
  s.className = `badge ${ok === undefined ? '' : ok ? 'ok' : 'bad'}`;
}
const age = (s) => (s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`);

function chart(snap) {
  const t = Date.parse(snap.at);
  if (previous) {
    const dt = Math.max(0.001, (t - previous.t) / 1000);
    const rates = Object.fromEntries(KINDS.map((k) => [k, Math.max(0, (snap.decisions[k] - previous.d[k]) / dt)]));
    history.push({ t, rates });
    while (history.length > 120) history.shift();
  }
  previous = { t, d: snap.decisions };
  const svg = $('#chart');
  const max = Math.max(1, ...history.flatMap((h) => KINDS.map((k) => h.rates[k])));
  svg.replaceChildren();
  for (const k of KINDS) {
    // The newest point is at the right edge; the window is the last 120 snapshots.
    const pts = history.map((h, i) => `${((i + 120 - history.length) / 119) * 600},${160 - (h.rates[k] / max) * 150}`).join(' ');
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', pts);
    line.setAttribute('fill', 'none');
    line.setAttribute('stroke', COLORS[k]);
    line.setAttribute('stroke-width', '2');
    svg.appendChild(line);
  }
  const total = KINDS.slice(0, 3).map((k) => `${k} ${snap.decisions[k]}`).join(' · ');
  $('#totals').textContent = ` — since start: ${total} (peak ${max.toFixed(1)}/s)`;
}

/**
 * What an incident is, as its alarm reads: the identity fields and the latest
 * summary (olt-7 · LOS · fiber-cut-12 · OLT 7 lost signal), or an alert's
 * name, or PagerDuty's source; the hash when the record has none of these.
 */
function what(i) {
  const who = [i.element_id, i.fault_class, i.root_cause_id].filter((x) => x);
  const labels = i.labels || {};
  if (who.length === 0 && (labels.alertname || labels.source)) who.push(labels.alertname || labels.source);
  const summary = (i.summary || '').replace(/\s+/g, ' ').trim();
  if (summary) who.push(summary.length > 80 ? `${summary.slice(0, 79)}…` : summary);
  return who.length > 0 ? who.join(' · ') : i.dedup_key;
}

function incidents(snap) {
  const rows = snap.incidents.map((i) => ({ ...i, what: what(i) })).sort((a, b) => {
    const x = a[sort.key];
    const y = b[sort.key];
    const c = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
    return sort.desc ? -c : c;
  });
  const body = $('#incidents tbody');
  body.replaceChildren(
    ...rows.map((i) => {
      const tr = document.createElement('tr');
      tr.dataset.key = i.dedup_key;
      // What it is first, the key beneath it: text nodes only (labels are the producer's).
      const shown = document.createElement('div');
      const name = document.createElement('div');
      name.className = 'what';
      name.textContent = i.what;
      const hash = document.createElement('div');
      hash.className = 'hash';
      hash.textContent = i.dedup_key;
      shown.append(name, hash);
      cell(tr, shown, 'incident');
      cell(tr, i.severity + (i.cleared ? ' (cleared)' : ''));
      cell(tr, i.refires);
      cell(tr, i.updates);
      cell(tr, age(i.age_seconds));
      cell(tr, new Date(i.last_seen_at).toLocaleTimeString());
      // A silence of this one incident for an hour: its deliveries wait, its decisions go on.
      const button = document.createElement('button');
      button.textContent = 'Silence 1 h';
      button.className = 'silence';
      button.addEventListener('click', async () => {
        button.disabled = true;
        const now = Date.now();
        const body = {
          matchers: [{ name: 'dedup_key', value: i.dedup_key, isRegex: false, isEqual: true }],
          startsAt: new Date(now).toISOString(),
          endsAt: new Date(now + 3_600_000).toISOString(),
          createdBy: 'dashboard',
          comment: `silenced from the dashboard (${i.severity})`,
        };
        const r = await fetch('/api/v2/silences', { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
        button.textContent = r.status === 200 ? 'silenced' : `failed (${r.status})`;
      });
      // The key's history, as `onceonly explain` prints it: the timeline and the answer.
      const why = document.createElement('button');
      why.textContent = 'History';
      why.className = 'history';
      why.addEventListener('click', () => timeline(i));
      const actions = document.createElement('span');
      actions.append(why, text(' '), button);
      cell(tr, actions);
      return tr;
    }),
  );
  $('#incident-count').textContent = `(${snap.incidents.length})`;
}

/** Opens the timeline of one incident's history (text nodes only: the events carry producers' labels). */
async function timeline(i) {
  $('#timeline').hidden = false;
  $('#timeline-what').textContent = i.what;
  $('#timeline-key').textContent = i.dedup_key;
  $('#timeline-lines').textContent = 'loading…';
  $('#timeline-answer').textContent = '';
  const r = await fetch(`/v1/incidents/${encodeURIComponent(i.dedup_key)}/history`, { headers: headers() });
  const body = await r.json().catch(() => null);
  const events = r.status === 200 && body ? body.events : [];
  if (r.status !== 200 && r.status !== 404) {
    $('#timeline-lines').textContent = `could not read the history (HTTP ${r.status})`;
    return;
  }
  const lines = explain(i.dedup_key, events);
  $('#timeline-lines').textContent = lines.slice(0, -2).join('\n');
  $('#timeline-answer').textContent = lines.at(-1);
  $('#timeline').scrollIntoView({ block: 'nearest' });
}

function events(snap) {
  const e = snap.events;
  const rejected = Object.values(e.rejected).reduce((a, b) => a + b, 0);
  const inv = $('#invariant');
  inv.textContent = `received ${e.received} = applied ${e.applied} + duplicate ${e.duplicate} + rejected ${rejected}: ${e.invariant_holds ? 'holds' : 'BROKEN'}`;
  inv.className = `badge ${e.invariant_holds ? 'ok' : 'bad'}`;
  const dl = $('#events');
  dl.replaceChildren();
  for (const [k, v] of [['sequence gaps', e.sequence_gaps], ...Object.entries(e.rejected).map(([r, n]) => [`rejected: ${r}`, n])]) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    dl.append(dt, dd);
  }
}

function devices(snap) {
  const stale = snap.devices.filter((d) => d.stale).length;
  $('#device-count').textContent = `(${snap.devices.length}${stale ? `, ${stale} stale` : ''})`;
  $('#devices tbody').replaceChildren(
    ...snap.devices.map((d) => {
      const tr = document.createElement('tr');
      tr.dataset.device = d.device_id;
      cell(tr, d.device_id, 'key');
      cell(tr, d.state);
      cell(tr, `${d.boot_id} · ${d.sequence}`);
      cell(tr, d.gaps, d.gaps > 0 ? 'gaps' : undefined);
      cell(tr, age(Math.round(d.age_seconds)));
      const flag = document.createElement('span');
      flag.className = `badge ${d.stale ? 'bad' : 'ok'}`;
      flag.textContent = d.stale ? 'stale' : 'fresh';
      cell(tr, flag);
      return tr;
    }),
  );
}

function delivery(snap) {
  const d = snap.delivery;
  const dl = $('#backlog');
  dl.replaceChildren();
  for (const [k, v] of [['pending', d.pending], ['dead letters', d.dead], ['outbox lag', d.lag_seconds === null ? null : age(d.lag_seconds)]]) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    // null: not shown to one tenant (the queue spans every tenant).
    dd.textContent = v ?? '—';
    dl.append(dt, dd);
  }
  $('#adapters tbody').replaceChildren(
    ...Object.entries(d.adapters).map(([name, o]) => {
      const tr = document.createElement('tr');
      cell(tr, name);
      for (const k of ['delivered', 'retried', 'dead', 'skipped']) cell(tr, o[k] ?? 0);
      return tr;
    }),
  );
}

function deadLetters(snap) {
  $('#dead-count').textContent = `(${snap.dead_letters.length})`;
  $('#dead tbody').replaceChildren(
    ...snap.dead_letters.map((d) => {
      const tr = document.createElement('tr');
      tr.dataset.id = d.id;
      cell(tr, d.adapter);
      cell(tr, `${d.kind} ${d.action}`);
      cell(tr, d.key, 'key');
      cell(tr, d.attempts.at(-1)?.error ?? '', 'err');
      tr.lastChild.title = d.attempts.map((a) => `${a.at} ${a.error}`).join('\n');
      cell(tr, d.dead_at ? new Date(d.dead_at).toLocaleTimeString() : '');
      // What waits behind it: later changes of this key to this adapter go out only once it is retried or dropped.
      cell(tr, d.waiting ? `${d.waiting} held behind it` : '', 'waiting');
      const act = (label, method, path, ok, done) => {
        const button = document.createElement('button');
        button.textContent = label;
        button.addEventListener('click', async () => {
          button.disabled = true;
          const r = await fetch(`/v1/dead-letters/${encodeURIComponent(d.id)}${path}`, { method, headers: headers() });
          button.textContent = r.status === ok ? done : `failed (${r.status})`;
        });
        return button;
      };
      const buttons = document.createElement('span');
      buttons.append(act('Retry', 'POST', '/retry', 202, 'queued'), ' ', act('Drop', 'DELETE', '', 204, 'dropped'));
      cell(tr, buttons);
      return tr;
    }),
  );
}

function silences(snap) {
  const total = snap.silences_total ?? snap.silences.length;
  $('#silence-count').textContent = total > snap.silences.length ? `(${snap.silences.length} of ${total})` : `(${total})`;
  const holds = Object.entries(snap.delivery.holds ?? {})
    .map(([by, n]) => `${by.replace('_', '-')} ${n}`)
    .join(', ');
  $('#held').textContent = [snap.delivery.held == null ? '' : `Held now: ${snap.delivery.held}.`, holds ? `Held since start: ${holds}.` : ''].join(' ');
  $('#silences tbody').replaceChildren(
    ...snap.silences.map((s) => {
      const tr = document.createElement('tr');
      tr.dataset.id = s.id;
      const op = (m) => (m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=');
      const more = s.more_matchers ? ` (+${s.more_matchers} more)` : '';
      cell(tr, s.matchers.map((m) => `${m.name}${op(m)}${JSON.stringify(m.value)}`).join(' ') + more, 'key');
      cell(tr, s.status.state);
      cell(tr, new Date(s.endsAt).toLocaleString());
      cell(tr, s.createdBy);
      cell(tr, s.comment);
      const button = document.createElement('button');
      button.textContent = 'Expire';
      button.addEventListener('click', async () => {
        button.disabled = true;
        const r = await fetch(`/api/v2/silence/${encodeURIComponent(s.id)}`, { method: 'DELETE', headers: headers() });
        button.textContent = r.status === 200 ? 'expired' : `failed (${r.status})`;
      });
      cell(tr, button);
      return tr;
    }),
  );
}

function heartbeats(snap) {
  const missed = snap.heartbeats.filter((h) => h.state === 'missed').length;
  $('#heartbeat-count').textContent = `(${snap.heartbeats.length}${missed ? `, ${missed} missed` : ''})`;
  $('#heartbeats tbody').replaceChildren(
    ...snap.heartbeats.map((h) => {
      const tr = document.createElement('tr');
      tr.dataset.name = h.name;
      if (h.state === 'missed') tr.className = 'missed';
      cell(tr, h.name, 'key');
      cell(tr, h.state, 'state');
      cell(tr, h.last_ping_at ? new Date(h.last_ping_at).toLocaleString() : 'never');
      cell(tr, new Date(h.due_at).toLocaleString());
      return tr;
    }),
  );
}

function render(snap) {
  last = snap;
  chart(snap);
  incidents(snap);
  events(snap);
  devices(snap);
  delivery(snap);
  deadLetters(snap);
  silences(snap);
  heartbeats(snap);
  status(`live · ${snap.tenant} · ${new Date(snap.at).toLocaleTimeString()}`, true);
}

async function stream() {
  for (;;) {
    try {
      const res = await fetch('/v1/dashboard/stream', { headers: headers() });
      if (res.status === 401) return askToken();
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      $('#login').hidden = true;
      $('#board').hidden = false;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const raw = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const event = /^event: (.*)$/m.exec(raw)?.[1];
          const data = /^data: (.*)$/m.exec(raw)?.[1];
          if (event === 'snapshot' && data) render(JSON.parse(data));
          else if (event === 'error' && data) status(`store: ${JSON.parse(data).message}`, false);
        }
      }
    } catch (err) {
      status(`disconnected: ${err.message}`, false);
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function askToken() {
  $('#board').hidden = true;
  $('#login').hidden = false;
  status(token ? 'that token was refused' : 'a tenant token is needed', false);
}

$('#login').addEventListener('submit', (e) => {
  e.preventDefault();
  token = $('#token').value.trim();
  sessionStorage.setItem('onceonly-token', token);
  void stream();
});
for (const th of document.querySelectorAll('th[data-sort]')) {
  th.addEventListener('click', () => {
    sort = { key: th.dataset.sort, desc: sort.key === th.dataset.sort ? !sort.desc : true };
    if (last) incidents(last);
  });
}
void stream();

$('#timeline-close').addEventListener('click', () => {
  $('#timeline').hidden = true;
});
