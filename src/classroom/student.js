// The student's view of a classroom room (decoding-explorer classroom): join by code, see
// the text so far, send one guess a round, see one's own result at the reveal. The frames
// are decoding_page::page::room's (FromStudent, ToStudent). A dropped connection (a phone
// asleep, Wi-Fi) reconnects by itself and the server gives back this round and the guess.

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let code = (params.get('code') || '').toUpperCase();
let ws = null;
let retry = 1000;
let stopped = false;
let round = null;

/** This phone's id: random, kept, never a name. */
function studentId() {
  let id = localStorage.getItem('decoding-explorer-student');
  if (!id || !/^[0-9a-f]{32}$/.test(id)) {
    const b = crypto.getRandomValues(new Uint8Array(16));
    id = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    localStorage.setItem('decoding-explorer-student', id);
  }
  return id;
}

const status = (text) => { $('status').textContent = text; };

function showRound(r) {
  round = r;
  // The address holds the room: a reload (or a phone woken up) joins it again.
  if (new URLSearchParams(location.search).get('code') !== code) history.replaceState(null, '', `/join?code=${code}`);
  $('join').hidden = true;
  $('round').hidden = false;
  $('round-n').textContent = String(r.round);
  $('context').textContent = r.context || '(the presenter has not opened a round yet)';
  const list = $('choice-list');
  list.replaceChildren();
  for (const c of r.choices) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = c;
    b.setAttribute('aria-pressed', 'false');
    b.dataset.testid = 'choice';
    b.addEventListener('click', () => {
      $('text').value = c;
      for (const o of list.children) o.setAttribute('aria-pressed', String(o === b));
    });
    list.append(b);
  }
  $('choices').hidden = r.choices.length === 0;
  const can = r.open && !r.guess;
  $('text').disabled = !can;
  $('submit').disabled = !can;
  for (const o of list.children) o.disabled = !can;
  if (r.guess) $('text').value = r.guess;
  else if (r.open) { $('text').value = ''; $('result').textContent = ''; }
  status(r.open
    ? (r.guess ? `Your guess “${r.guess}” is in. Wait for the reveal.` : 'Guess the next word, then Submit.')
    : (r.guess ? `Guessing is closed; your guess “${r.guess}” counts.` : 'Guessing is closed: wait for the next round.'));
}

function showResult(m) {
  const pct = (x) => `${(100 * x).toFixed(0)}%`;
  // As the presenter's chart writes it: three decimals, or two digits below 0.001.
  const prob = (p) => (p >= 0.001 || p === 0 ? p.toFixed(3) : p.toExponential(1));
  $('result').textContent = m.piece == null
    ? `Your guess “${m.guess}” adds no token. The model's favourite was ${m.model_top}.`
    : `Your guess “${m.guess}” is the token ${m.piece}: the model gave it p = ${prob(m.p)} (rank ${m.rank}); ${pct(m.share)} of the class guessed it. The model's favourite was ${m.model_top}.`;
}

function connect() {
  if (stopped || !code) return;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/student`;
  ws = new WebSocket(url);
  ws.addEventListener('open', () => {
    retry = 1000;
    ws.send(JSON.stringify({ type: 'join', code, student: studentId() }));
  });
  ws.addEventListener('message', (e) => {
    let m;
    try { m = JSON.parse(e.data); } catch { return; }
    if (m.type === 'round') showRound(m);
    else if (m.type === 'accepted') showRound({ ...round, guess: m.guess });
    else if (m.type === 'refused') status(m.message);
    else if (m.type === 'result') showResult(m);
    else if (m.type === 'drawn') $('drawn').textContent = `Last round the model wrote ${m.piece}.`;
    else if (m.type === 'closed') { stopped = true; status(m.reason); }
  });
  ws.addEventListener('close', (e) => {
    // The server said why (a full room, no such code, the room closed): no retry.
    if (e.code === 1000 || e.code === 1008 || e.code === 1003 || e.code === 1009) {
      stopped = true;
      status(e.reason || 'The room closed this connection.');
      if (!round) { $('join').hidden = false; stopped = false; }
      return;
    }
    status('Connection lost: reconnecting…');
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 10_000);
  });
}

$('join').addEventListener('submit', (e) => {
  e.preventDefault();
  code = $('code').value.trim().toUpperCase();
  stopped = false;
  connect();
});

$('guess').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('text').value.trim();
  if (!text || !ws || ws.readyState !== WebSocket.OPEN) return;
  ws.send(JSON.stringify({ type: 'guess', text }));
});

$('code').value = code;
if (code) connect();
