// chromium.js: Debian's Chromium, headless, driven over the DevTools
// protocol through a pipe (--remote-debugging-pipe: fd 3 to the browser,
// fd 4 back, NUL-terminated JSON messages), so the kit's browser checks
// need no npm package. tools/book/browser_check.js and
// tools/checks/figure-text.js use it:
//
//   const { launch } = require('./chromium.js');   // from tools/book/
//   const b = launch('/usr/bin/chromium', 'browser check');
//   const { targetId } = await b.send('Target.createTarget', { url: 'about:blank' });
//   ...
//   b.finish(code);                                 // kills it and exits
//
// launch() starts the browser with a fresh profile in a temporary folder
// and gives back:
//   send(method, params, sessionId)  a command; its result, or an error
//                                    naming the method
//   waitFor(method, sessionId)       the next event of that method
//   listeners                        functions called with every event
//   finish(code)                     the browser killed, its profile
//                                    removed, the process exited
//   openPage(errors, log)            a new page, attached: its session
//                                    id; its console errors and
//                                    uncaught exceptions (and with log,
//                                    the browser's logged errors) are
//                                    pushed onto errors as lines
// The process ends with an error naming LABEL when the browser exits
// before finish(), or when the whole takes over TIMEOUT_S seconds.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const TIMEOUT_S = 120;

function launch(chrome, label) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'kit-chromium-'));
  const proc = spawn(chrome, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-extensions', '--mute-audio', `--user-data-dir=${profile}`,
    '--remote-debugging-pipe', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '', finished = false;
  proc.stderr.on('data', (d) => { stderr += d; });
  function finish(code) {
    finished = true;
    clearTimeout(timer);
    try { proc.kill('SIGKILL'); } catch (e) { /* already gone */ }
    try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* ignore */ }
    process.exit(code);
  }
  const timer = setTimeout(() => {
    console.error(`${label}: Chromium did not finish within ${TIMEOUT_S} s`);
    finish(1);
  }, TIMEOUT_S * 1000);
  proc.on('exit', (code) => {
    if (!finished) {
      console.error(`${label}: Chromium exited early (${code}):\n${stderr.slice(-1500)}`);
      finish(1);
    }
  });

  const toChrome = proc.stdio[3], fromChrome = proc.stdio[4];
  let nextId = 1, buffer = '';
  const pending = new Map(), listeners = [];
  fromChrome.on('data', (chunk) => {
    buffer += chunk.toString('utf8');
    let end;
    while ((end = buffer.indexOf('\0')) >= 0) {
      const msg = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (msg.id && pending.has(msg.id)) {
        const { resolve, reject, method } = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
        else resolve(msg.result);
      } else if (msg.method) {
        for (const l of listeners.slice()) l(msg);
      }
    }
  });
  function send(method, params = {}, sessionId) {
    const id = nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    toChrome.write(JSON.stringify(msg) + '\0');
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
  }
  function waitFor(method, sessionId) {
    return new Promise((resolve) => {
      const l = (msg) => {
        if (msg.method === method && (!sessionId || msg.sessionId === sessionId)) {
          listeners.splice(listeners.indexOf(l), 1);
          resolve(msg.params);
        }
      };
      listeners.push(l);
    });
  }
  async function openPage(errors, log) {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId: s } = await send('Target.attachToTarget', { targetId, flatten: true });
    listeners.push((msg) => {
      if (msg.sessionId !== s) return;
      const p = msg.params;
      if (msg.method === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert')) {
        errors.push(`console.${p.type}: ${p.args.map((a) => a.value ?? a.description).join(' ')}`);
      } else if (msg.method === 'Runtime.exceptionThrown') {
        const d = p.exceptionDetails;
        errors.push(`exception: ${d.exception ? d.exception.description : d.text}`);
      } else if (log && msg.method === 'Log.entryAdded' && p.entry.level === 'error') {
        errors.push(`browser log (${p.entry.source}): ${p.entry.text}${p.entry.url ? ' ' + p.entry.url.slice(0, 80) : ''}`);
      }
    });
    return s;
  }
  return { send, waitFor, listeners, finish, openPage };
}

module.exports = { launch };
