// The live page of a majordomus server: one WebSocket (/live) that pushes the state as it changes,
// rendered with plain DOM calls (text only: nothing a peer wrote is ever parsed as HTML).
// The token lives in this tab's sessionStorage and nowhere else.

const TOKEN_KEY = 'majordomus.token';
const RETRY_MS = [500, 1000, 2000, 4000, 8000, 10000];
const MESSAGES_TO = 'all';

const $ = (id) => document.getElementById(id);

const view = { server: null, host: null, harness: null };
let socket = null;
let retries = 0;
let retryTimer = null;
let refused = false;
let everConnected = false;

// ---------------------------------------------------------------------------------------------
// Token: from the URL fragment (`majordomus open` prints it), then from the tab, else asked for.

function tokenFromFragment() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match) return null;
  // The token leaves the address bar (and the history) at once.
  history.replaceState(null, '', location.pathname + location.search);
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

function currentToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

function askForToken(why) {
  sessionStorage.removeItem(TOKEN_KEY);
  $('token-why').textContent = why;
  $('token-panel').hidden = false;
  setConnection('Waiting for the token', 'down');
  $('token-input').focus();
}

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token-input').value.trim();
  if (token === '') return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $('token-input').value = '';
  $('token-panel').hidden = true;
  connect();
});

// ---------------------------------------------------------------------------------------------
// The feed.

function setConnection(text, state) {
  const node = $('connection');
  node.textContent = text;
  node.className = `connection ${state}`;
}

function connect() {
  clearTimeout(retryTimer);
  const token = currentToken();
  if (!token) {
    askForToken('The live view shows what the agents do, so it needs the token of the checkout\'s server.');
    return;
  }
  refused = false;
  const ws = new WebSocket(`ws://${location.host}/live`);
  socket = ws;
  ws.addEventListener('open', () => ws.send(JSON.stringify({ type: 'hello', token })));
  ws.addEventListener('message', (event) => onFrame(ws, event.data));
  ws.addEventListener('close', () => onClose(ws));
}

function onFrame(ws, data) {
  let frame;
  try {
    frame = JSON.parse(data);
  } catch {
    return;
  }
  if (frame.type === 'error') {
    if (frame.code === 'unauthorized') {
      refused = true;
      askForToken(
        everConnected
          ? 'The server at this address refused the token: it is a new server (after a takeover its lease, and its token, are new). Run majordomus open in the checkout for the new address and token.'
          : 'The server refused this token. Run majordomus open in the checkout: it prints the address with the right token.',
      );
    }
    return;
  }
  if (frame.type === 'state' || frame.type === 'update') {
    for (const part of ['server', 'host', 'harness']) if (part in frame) view[part] = frame[part];
    if (frame.type === 'state') connected();
    render();
  }
}

function connected() {
  retries = 0;
  everConnected = true;
  $('lost').hidden = true;
  $('token-panel').hidden = true;
  setConnection(`Live: ${view.server ? view.server.url : location.origin}`, 'live');
}

function onClose(ws) {
  if (socket !== ws) return;
  socket = null;
  if (refused) return; // the token form is up; connecting again waits for it
  const wait = RETRY_MS[Math.min(retries, RETRY_MS.length - 1)];
  retries += 1;
  $('lost').hidden = false;
  $('lost-detail').textContent = `Trying ${location.host} again in ${Math.round(wait / 100) / 10} s (attempt ${retries}).`;
  setConnection('Disconnected: the server went away', 'down');
  retryTimer = setTimeout(connect, wait);
}

// ---------------------------------------------------------------------------------------------
// Rendering: each panel's content is built again from the state; the panels themselves stay.

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function fill(id, nodes, emptyText) {
  const target = $(id);
  target.replaceChildren(...(nodes.length > 0 ? nodes : emptyText ? [el('li', { class: 'empty', text: emptyText })] : []));
}

function when(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString();
}

function uptime(startedAt) {
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(startedAt)) / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s} s` : `${s} s`;
}

function render() {
  renderServer();
  renderPeers();
  renderClaims();
  renderMessages();
  renderSessions();
  renderTasks();
  renderUsage();
}

function renderServer() {
  const server = view.server;
  const host = view.host;
  const facts = [];
  const fact = (name, value, id) => facts.push(el('dt', { text: name }), el('dd', id ? { id, text: value } : { text: value }));
  if (server) {
    fact('Address', server.url);
    fact('Version', server.version);
    fact('Leaseholder', server.leaseholder ? 'yes: this server holds the checkout\'s lease' : 'no: another server took the lease');
  }
  if (host) {
    fact('Uptime', uptime(host.startedAt), 'uptime');
    fact('Process', String(host.pid));
    fact('Layer generation', String(host.generation));
    fact('Layer objects', String(host.objects));
    fact('Diagnostics', String(host.diagnosticCount));
  }
  $('server-facts').replaceChildren(...facts);
  const diagnostics = (host ? host.diagnostics : []).map((d) =>
    el('li', { class: d.severity === 'error' ? 'conflict' : '' }, el('span', { class: 'tag bad', text: d.code }), ` ${d.path}: ${d.message}`),
  );
  fill('diagnostics', diagnostics, 'No diagnostics: the layer is clean.');
}

function renderPeers() {
  const host = view.host;
  const peers = host ? host.peers : [];
  $('peer-count').textContent = `(${peers.length})`;
  const inConflict = new Set((host ? host.conflicts : []).flatMap((c) => c.peers));
  const claimsOf = (peer) => (host ? host.claims.filter((c) => c.peer === peer) : []);
  fill(
    'peer-list',
    peers.map((peer) => {
      const announcement = peer.announcement;
      const claims = claimsOf(peer.id);
      return el(
        'li',
        { class: inConflict.has(peer.id) ? 'conflict' : '', 'data-peer': peer.id },
        el('strong', { text: peer.id }),
        ` ${peer.client.name} ${peer.client.version} · ${peer.transport}`,
        inConflict.has(peer.id) ? el('span', { class: 'tag bad', text: 'in conflict' }) : null,
        el('div', { class: 'meta', text: `attached ${when(peer.connected_at)} · seen ${peer.last_seen_seconds_ago} s ago` }),
        announcement
          ? el('div', {}, el('span', { class: 'meta', text: 'intent: ' }), announcement.intent, announcement.paths.length ? el('span', { class: 'meta', text: ` — ${announcement.paths.join(', ')}` }) : null)
          : el('div', { class: 'meta', text: 'no announcement' }),
        claims.length ? el('div', { class: 'meta', text: `claims: ${claims.map((c) => `${c.id} ${c.paths.join(', ')}`).join('; ')}` }) : null,
      );
    }),
    'No agent is attached.',
  );
  renderRecipients(peers);
}

function renderClaims() {
  const host = view.host;
  const claims = host ? host.claims : [];
  const conflicts = host ? host.conflicts : [];
  $('claim-count').textContent = `(${claims.length}, ${conflicts.length} in conflict)`;
  const conflicted = new Set(conflicts.flatMap((c) => c.claims));
  fill(
    'conflict-list',
    conflicts.map((c) =>
      el(
        'li',
        { class: 'conflict', 'data-conflict': c.claims.join('-') },
        el('span', { class: 'tag bad', text: c.exclusive ? 'exclusive conflict' : 'shared overlap' }),
        ` ${c.peers[0]} (${c.claims[0]}) and ${c.peers[1]} (${c.claims[1]}) on ${c.paths.map((p) => (p.a === p.b ? p.a : `${p.a} ↔ ${p.b}`)).join(', ')}`,
      ),
    ),
    'No overlapping claims.',
  );
  fill(
    'claim-list',
    claims.map((c) =>
      el(
        'li',
        { class: conflicted.has(c.id) ? 'conflict' : '', 'data-claim': c.id },
        el('strong', { text: `${c.id} ` }),
        `${c.peer} · ${c.exclusive ? 'exclusive' : 'shared'}${c.live ? '' : ' · waiting for its peer'}`,
        conflicted.has(c.id) ? el('span', { class: 'tag bad', text: 'conflict' }) : null,
        el('div', { text: c.paths.join(', ') }),
        el('div', { class: 'meta', text: `${c.intent} · until ${when(c.expires_at)}` }),
      ),
    ),
    'No claims.',
  );
}

function messageItem(m) {
  return el(
    'li',
    { 'data-message': m.id },
    el('div', { class: 'meta', text: `${m.id} · ${when(m.at)} · from ${m.from} to ${m.to.join(', ')}${m.acknowledged === false ? ' · unread' : ''}` }),
    m.subject ? el('strong', { text: m.subject }) : null,
    el('p', { class: 'body', text: m.body }),
  );
}

function renderMessages() {
  const host = view.host;
  const inbox = host ? host.inbox : { unread: 0, messages: [] };
  $('inbox-count').textContent = `(${inbox.messages.length}, ${inbox.unread} unread)`;
  fill('inbox-list', inbox.messages.slice().reverse().map(messageItem), 'Nothing addressed to the overseer.');
  const threads = new Map();
  for (const m of host ? host.messages : []) {
    if (!threads.has(m.thread)) threads.set(m.thread, []);
    threads.get(m.thread).push(m);
  }
  const blocks = [...threads.entries()].reverse().map(([thread, messages]) =>
    el('section', { class: 'thread', 'aria-label': `Thread ${thread}` }, el('h4', { text: `Thread ${thread} (${messages.length})` }), el('ol', { class: 'messages' }, ...messages.map(messageItem))),
  );
  $('thread-list').replaceChildren(...(blocks.length > 0 ? blocks : [el('p', { class: 'empty', text: 'No messages yet.' })]));
}

function renderRecipients(peers) {
  const select = $('post-to');
  const chosen = select.value || MESSAGES_TO;
  const options = [el('option', { value: MESSAGES_TO, text: 'All agents' }), ...peers.map((p) => el('option', { value: p.id, text: `${p.id} (${p.client.name})` }))];
  select.replaceChildren(...options);
  select.value = [...select.options].some((o) => o.value === chosen) ? chosen : MESSAGES_TO;
}

function renderSessions() {
  const harness = view.harness;
  const sessions = harness ? harness.sessions : [];
  $('session-count').textContent = harness ? `(${sessions.length})` : '(no harness on this server)';
  const blocks = sessions.map((s) =>
    el(
      'article',
      { class: 'session', 'data-session': s.session, 'aria-labelledby': `session-${s.session}` },
      el('h3', { id: `session-${s.session}`, text: `${s.session} · ${s.profile}` }),
      el('div', { class: 'meta' }, el('span', { class: `status-${s.status}`, text: s.status }), ` · ${s.agent} · last turn ${when(s.lastTurnAt)}${s.exitCode === undefined ? '' : ` · exit ${s.exitCode}`}`),
      el('ol', { class: 'tail', 'aria-label': `Last transcript entries of ${s.session}` }, ...s.tail.map((line) => el('li', { text: line }))),
    ),
  );
  $('session-list').replaceChildren(...(blocks.length > 0 ? blocks : [el('p', { class: 'empty', text: 'No agent sessions.' })]));
}

function renderTasks() {
  const harness = view.harness;
  const tasks = harness ? harness.tasks : [];
  const currency = harness && harness.usage ? harness.usage.currency : null;
  $('task-count').textContent = `(${tasks.length})`;
  const rows = tasks.map((t) =>
    el(
      'tr',
      { 'data-task': t.task_id },
      el('th', { scope: 'row', text: t.task_id }),
      el('td', { class: `status-${t.status}`, text: t.status }),
      el('td', { text: String(t.turns) }),
      el('td', { text: String(t.prompt_tokens) }),
      el('td', { text: String(t.completion_tokens) }),
      el('td', { text: t.cost === undefined ? '—' : money(t.cost, currency) }),
      el('td', { text: t.question ?? t.error ?? t.last_tool ?? '' }),
    ),
  );
  $('task-rows').replaceChildren(...(rows.length > 0 ? rows : [el('tr', {}, el('td', { colspan: '7', class: 'empty', text: 'No executor tasks.' }))]));
}

// An amount as the page shows it: to a millionth, as the server sums it (a cheap model costs
// fractions of a cent), without trailing zeros past the cents.
function money(amount, currency) {
  const [whole, fraction = ''] = amount.toFixed(6).replace(/(\.\d*?[1-9])0+$|\.0+$/, '$1').split('.');
  return `${whole}.${fraction.padEnd(2, '0')} ${currency ?? ''}`.trim();
}

function usageRow(row, currency) {
  // A row some of whose requests had no price says so: its cost covers only the priced ones.
  const partly = row.priced_requests !== undefined && row.priced_requests < row.requests ? ` (${row.priced_requests} of ${row.requests} priced)` : '';
  return el(
    'tr',
    { 'data-usage': row.name },
    el('th', { scope: 'row', text: row.name }),
    el('td', { text: String(row.requests) }),
    el('td', { text: String(row.failed) }),
    el('td', { text: String(row.prompt_tokens) }),
    el('td', { text: String(row.completion_tokens) }),
    el('td', { text: row.cost === undefined ? 'no price' : `${money(row.cost, currency)}${partly}` }),
    el('td', { text: row.saved === undefined ? '—' : money(row.saved, currency) }),
  );
}

function renderUsage() {
  const usage = view.harness ? view.harness.usage : null;
  const currency = usage ? usage.currency : null;
  const empty = (text) => [el('tr', {}, el('td', { colspan: '7', class: 'empty', text }))];
  if (!usage) {
    $('usage-summary').textContent = '(no harness on this server)';
    $('usage-note').textContent = '';
    $('usage-provider-rows').replaceChildren(...empty('No usage.'));
    $('usage-key-rows').replaceChildren(...empty('No usage.'));
    return;
  }
  const total = usage.total;
  const cost = total.cost === undefined ? '' : `, ${money(total.cost, currency)}`;
  const saved = total.saved === undefined ? '' : `, saved ${money(total.saved, currency)}`;
  $('usage-summary').textContent = `(${total.requests} requests${cost}${saved})`;
  const notes = [`Since ${when(usage.since)}.`];
  if (usage.reference) notes.push(`Saved is measured against ${usage.reference}.`);
  if (total.cost === undefined) notes.push('No request had a price: add prices to executor.yaml to see costs.');
  $('usage-note').textContent = notes.join(' ');
  $('usage-provider-rows').replaceChildren(...(usage.providers.length > 0 ? usage.providers.map((row) => usageRow(row, currency)) : empty('The gateway has forwarded nothing yet.')));
  $('usage-key-rows').replaceChildren(...(usage.keys.length > 0 ? usage.keys.map((row) => usageRow(row, currency)) : empty('The gateway has forwarded nothing yet.')));
}

// The uptime ticks here, in the page: the server sends when it started, not a clock.
setInterval(() => {
  const node = $('uptime');
  if (node && view.host) node.textContent = uptime(view.host.startedAt);
}, 1000);

// ---------------------------------------------------------------------------------------------
// Posting as the overseer: the REST API with the token (no MCP session: the sender is the overseer).

$('post-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const result = $('post-result');
  const token = currentToken();
  const body = $('post-body').value;
  const subject = $('post-subject').value.trim();
  const input = { to: [$('post-to').value || MESSAGES_TO], body, ...(subject ? { subject } : {}) };
  result.className = 'result';
  result.textContent = 'Sending…';
  try {
    const response = await fetch('/api/v1/messages', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token ?? ''}` },
      body: JSON.stringify(input),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      result.className = 'result bad';
      result.textContent = `Not sent: ${answer.error ? answer.error.message : response.status}`;
      if (response.status === 401) askForToken('The server refused the token while sending. Run majordomus open in the checkout for the current one.');
      return;
    }
    $('post-body').value = '';
    $('post-subject').value = '';
    const delivered = answer.delivered && answer.delivered.length ? answer.delivered.join(', ') : 'nobody attached right now (kept in the thread)';
    result.textContent = `Sent ${answer.message.id}; told ${delivered}.`;
  } catch (error) {
    result.className = 'result bad';
    result.textContent = `Not sent: the server did not answer (${error.message}).`;
  }
});

// ---------------------------------------------------------------------------------------------

// A new address with a token pasted into this tab (after a takeover): take it and connect again.
window.addEventListener('hashchange', () => {
  const token = tokenFromFragment();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $('token-panel').hidden = true;
  if (socket) socket.close();
  else connect();
});

const fromFragment = tokenFromFragment();
if (fromFragment) sessionStorage.setItem(TOKEN_KEY, fromFragment);
render();
connect();
