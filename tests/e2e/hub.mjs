// An imitation of the Hugging Face hub's file URLs, served on the page's own origin under
// /hub and /cdn (the page's <meta name="decoding-hub"> is patched to /hub): as the hub does,
// `/hub/<repo>/resolve/main/<path>` answers 302 to its file host (here /cdn/…), which sends
// the bytes with an ETag and Accept-Ranges and answers `Range: bytes=N-` with 206 and a
// Content-Range (a 200 of the whole when If-Range names another ETag);
// `/hub/api/models/<repo>/tree/main` lists a repository's files with their LFS sizes and
// sha256. A test sets what goes wrong: a connection dropped part way, a file changed, a
// slow file, an HTML page in place of a file.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.mjs';

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

export function hub() {
  const files = new Map();
  const own = path.join(ROOT, 'assets/models/stories260K');
  files.set('karpathy/tinyllamas/stories260K/stories260K.bin', fs.readFileSync(path.join(own, 'stories260K.bin')));
  files.set('karpathy/tinyllamas/stories260K/tok512.bin', fs.readFileSync(path.join(own, 'tok512.bin')));
  files.set('someone/tiny-gguf/stories260K.gguf', fs.readFileSync(path.join(ROOT, 'assets/models/fixtures/gguf/stories260K.gguf')));
  const state = {
    files,
    /** Every request to /hub or /cdn: { path, range, ifRange }. */
    log: [],
    /** Paths whose next response is cut after this many bytes (then served whole). */
    dropAfter: new Map(),
    /** Paths served this many bytes every 20 ms. */
    slow: new Map(),
    /** Paths answered with an HTML error page (as application/octet-stream). */
    html: new Set(),
    /** Paths whose bytes are replaced (a file the list does not know). */
    replaced: new Map(),
    /** Paths whose Content-Length claims this many bytes (a file over the budget). */
    claims: new Map(),
  };
  const bytesOf = (p) => state.replaced.get(p) ?? state.files.get(p);

  function listing(repo, res) {
    const entries = [...state.files.keys()].filter((k) => k.startsWith(`${repo}/`)).map((k) => {
      const b = state.files.get(k);
      return { type: 'file', oid: sha(b).slice(0, 40), size: 134, path: k.slice(repo.length + 1), lfs: { oid: sha(b), size: b.length, pointerSize: 134 } };
    });
    if (!entries.length) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Repository not found"}');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(entries));
  }

  function file(p, req, res) {
    const b = bytesOf(p);
    if (state.html.has(p)) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end('<!DOCTYPE html><html><body>502 Bad Gateway</body></html>');
      return;
    }
    if (!b) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Entry not found');
      return;
    }
    const etag = `"${sha(b)}"`;
    const head = { 'Content-Type': 'application/octet-stream', ETag: etag, 'Accept-Ranges': 'bytes', 'Cache-Control': 'no-store' };
    if (state.claims.has(p)) {
      res.writeHead(200, { ...head, 'Content-Length': state.claims.get(p) });
      res.write(b.subarray(0, 1024));
      setTimeout(() => res.destroy(), 2_000);
      return;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ranged = m && (!req.headers['if-range'] || req.headers['if-range'] === etag);
    const from = ranged ? Number(m[1]) : 0;
    const body = b.subarray(from);
    res.writeHead(ranged ? 206 : 200, {
      ...head,
      'Content-Length': body.length,
      ...(ranged ? { 'Content-Range': `bytes ${from}-${b.length - 1}/${b.length}` } : {}),
    });
    const cut = state.dropAfter.get(p);
    if (cut !== undefined) {
      state.dropAfter.delete(p);
      res.write(body.subarray(0, cut), () => setTimeout(() => res.destroy(), 50));
      return;
    }
    const step = state.slow.get(p);
    if (!step) {
      res.end(body);
      return;
    }
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed || at >= body.length) {
        clearInterval(timer);
        if (!res.destroyed) res.end();
        return;
      }
      res.write(body.subarray(at, at + step));
      at += step;
    }, 20);
    res.on('close', () => clearInterval(timer));
  }

  /** The server's routes (harness `serve({ routes })`). */
  function routes(req, res, url) {
    const p = decodeURIComponent(url.pathname);
    if (!p.startsWith('/hub/') && !p.startsWith('/cdn/')) return false;
    state.log.push({ path: p, range: req.headers.range ?? null, ifRange: req.headers['if-range'] ?? null });
    const api = /^\/hub\/api\/models\/([^/]+\/[^/]+)\/tree\/main$/.exec(p);
    const resolve = /^\/hub\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(p);
    if (api) listing(api[1], res);
    else if (resolve) res.writeHead(302, { Location: `/cdn/${resolve[1]}/${resolve[2]}` }).end();
    else if (p.startsWith('/cdn/')) file(p.slice('/cdn/'.length), req, res);
    else res.writeHead(404).end();
    return true;
  }

  return { state, routes };
}

/** The page's files with the hub named as this imitation. */
export const hubPatch = {
  '/': (t) => t.replace('content="https://huggingface.co"', 'content="/hub"'),
  '/index.html': (t) => t.replace('content="https://huggingface.co"', 'content="/hub"'),
};
