// `decoding-explorer classroom` started for a test: on 127.0.0.1, a free port (--port 0),
// serving the built page; resolves to { url, pid, close } once it says where it listens.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ROOT, DIST } from './harness.mjs';

/** The CLI the tests run: the debug build `cargo test` leaves (scripts/test.sh runs it first). */
export const CLI_PATH = path.join(ROOT, 'target/debug/decoding-explorer');

export function startClassroom(args = []) {
  assert.ok(fs.existsSync(CLI_PATH), `${CLI_PATH} is missing: run cargo test first (scripts/test.sh does)`);
  const child = spawn(CLI_PATH, ['classroom', '--port', '0', '--dist', DIST, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`classroom did not start: ${out}`)), 30_000);
    const read = (d) => {
      out += d.toString();
      const m = out.match(/presenter opens (http:\/\/127\.0\.0\.1:\d+)\//);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          pid: child.pid,
          output: () => out,
          close: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }),
        });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`classroom exited ${code}: ${out}`)); });
  });
}

/** The server's resident memory now and at its peak, in KiB (/proc/PID/status). */
export function memoryKiB(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (k) => Number(s.match(new RegExp(`${k}:\\s+(\\d+) kB`))[1]);
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}
