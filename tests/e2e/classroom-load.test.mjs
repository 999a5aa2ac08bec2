// A classroom under load (issue 48): 500 simulated students on loopback guessing within the
// same second, every guess counted once and the tally back within a second; hostile frames
// (oversized, binary, invalid UTF-8, unreadable, a flood) close only their own connection
// and lose no other guess; the server's memory read from /proc before and after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startClassroom, memoryKiB } from './classroom-server.mjs';

const STUDENTS = 500;
const WORDS = ['girl', 'dog', 'cat', 'mom', 'sun'];

/** A WebSocket whose frames are queued, read with `next(type)`; `closed` resolves to
 * { code, reason }. */
function client(url) {
  const ws = new WebSocket(url);
  const frames = [];
  const waiting = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    frames.push(m);
    for (const w of waiting.splice(0)) w();
  });
  const closed = new Promise((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  const opened = new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  async function next(type, ms = 10_000) {
    const end = Date.now() + ms;
    for (;;) {
      const i = frames.findIndex((f) => f.type === type);
      if (i >= 0) return frames.splice(i, 1)[0];
      if (Date.now() > end) throw new Error(`no ${type} frame; have ${JSON.stringify(frames)}`);
      await new Promise((r) => { waiting.push(r); setTimeout(r, 50); });
    }
  }
  return { ws, frames, next, closed, opened, send: (m) => ws.send(JSON.stringify(m)) };
}

test('500 students in one second: each guess counted once, the tally within 1 s, hostile frames close only themselves', { timeout: 300_000 }, async () => {
  const server = await startClassroom();
  try {
    const ws = server.url.replace('http', 'ws');
    const keys = await (await fetch(`${server.url}/api/rooms`, { method: 'POST' })).json();
    const presenter = client(`${ws}/ws/presenter?code=${keys.code}&key=${keys.key}`);
    await presenter.opened;
    assert.equal((await presenter.next('room')).code, keys.code);
    // A wrong key is no presenter.
    const thief = client(`${ws}/ws/presenter?code=${keys.code}&key=${'0'.repeat(32)}`);
    await assert.rejects(thief.opened, /403/);
    presenter.send({ type: 'open', context: 'Once upon a time, there was a little', choices: ['girl', 'boy'] });
    const before = memoryKiB(server.pid);

    // The class joins, in batches of 50 connections.
    const students = [];
    for (let b = 0; b < STUDENTS; b += 50) {
      const batch = Array.from({ length: 50 }, (_, i) => client(`${ws}/ws/student`));
      await Promise.all(batch.map((s) => s.opened));
      batch.forEach((s, i) => s.send({ type: 'join', code: keys.code.toLowerCase(), student: `s${b + i}` }));
      for (const s of batch) assert.equal((await s.next('round')).open, true);
      students.push(...batch);
    }

    // Hostile connections beside them.
    const hostile = {
      oversized: client(`${ws}/ws/student`),
      binary: client(`${ws}/ws/student`),
      badUtf8: client(`${ws}/ws/student`),
      unreadable: client(`${ws}/ws/student`),
      // The room is full: a 501st student is refused with the reason.
      full: client(`${ws}/ws/student`),
    };
    await Promise.all(Object.values(hostile).map((h) => h.opened));
    hostile.full.send({ type: 'join', code: keys.code, student: 'one-more' });
    // The last student floods: one guess counts, the flood closes its connection.
    const flood = students[STUDENTS - 1];

    // Every guess within the same second, the hostile frames among them.
    const t0 = Date.now();
    students.forEach((s, i) => s.send({ type: 'guess', text: WORDS[i % WORDS.length] }));
    for (let i = 0; i < 40; i++) flood.send({ type: 'guess', text: WORDS[(STUDENTS - 1) % WORDS.length] });
    hostile.oversized.ws.send(JSON.stringify({ type: 'join', code: keys.code, student: 'x'.repeat(4000) }));
    hostile.binary.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    hostile.badUtf8.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    hostile.unreadable.ws.send('{"type":"guess","text":');
    const accepted = await Promise.all(students.map((s) => s.next('accepted')));
    const sent = Date.now() - t0;
    accepted.forEach((a, i) => assert.equal(a.guess, WORDS[i % WORDS.length]));

    const closes = Object.fromEntries(await Promise.all(Object.entries(hostile).map(async ([k, h]) => [k, await h.closed])));
    assert.equal(closes.oversized.code, 1009, JSON.stringify(closes.oversized));
    assert.equal(closes.binary.code, 1003);
    assert.match(closes.binary.reason, /binary frames/);
    assert.ok([1007, 1009].includes(closes.badUtf8.code), JSON.stringify(closes.badUtf8));
    assert.match(closes.unreadable.reason, /unreadable frame/);
    assert.match(closes.full.reason, /the room is full \(500 students\)/);
    const flooded = await flood.closed;
    assert.equal(flooded.code, 1008);
    assert.match(flooded.reason, /too many frames/);
    const honest = students.slice(0, -1);

    const t1 = Date.now();
    presenter.send({ type: 'reveal' });
    const tally = await presenter.next('tally');
    const revealMs = Date.now() - t1;
    assert.ok(revealMs < 1000, `the tally took ${revealMs} ms`);
    // 100 of each word (distinct first letters: distinct first tokens), the flooder's one
    // guess among them, counted before it was closed.
    const counts = tally.counts.map(([, n]) => n).sort((a, b) => b - a);
    assert.deepEqual(counts, [100, 100, 100, 100, 100]);
    // No one else lost their connection: each student is told the round closed.
    for (const s of honest) assert.equal((await s.next('round')).open, false);

    // Each student's own result.
    presenter.send({ type: 'results', model_top: 'girl', tokens: tally.counts.map(([token, n], i) => ({ token, p: 0.1, rank: i + 1, share: n / 500 })) });
    const results = await Promise.all(honest.map((s) => s.next('result')));
    results.forEach((r, i) => assert.equal(r.guess, WORDS[i % WORDS.length]));
    assert.ok(results.every((r) => r.rank >= 1 && r.rank <= 5 && r.piece));

    const afterMem = memoryKiB(server.pid);
    console.log(`classroom load: ${STUDENTS} guesses accepted in ${sent} ms, tally in ${revealMs} ms; server RSS ${before.rss} KiB before the class, ${afterMem.rss} KiB after, peak ${afterMem.peak} KiB`);
    assert.ok(afterMem.peak < 256 * 1024, `peak ${afterMem.peak} KiB`);
    for (const s of [...honest, presenter]) s.ws.close();
  } finally {
    await server.close();
  }
});
