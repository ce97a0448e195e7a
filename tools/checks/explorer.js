#!/usr/bin/env node
// explorer.js: the head explorer (make explorer, tools/explorer/) in a
// real browser, against the C code (tools/checks/74-browser.sh runs it).
//
//   node tools/checks/explorer.js EXPLORER.html PLANTED.html SHOTDIR CHROMIUM DUMP.json...
//
// Each DUMP.json is what `lm-experiment --explore-dump` wrote for one of
// the page's networks (tools/runs/lm/explore.c): the inputs (the lesson's
// sentence, as the parser links it and in full, and the size's first 20
// test windows), every head's weights and every position's logits, as
// they are and with block 0's head 0 mean-ablated. Headless Chromium
// opens EXPLORER.html from file://, and the page's own forward pass
// (window.explorer.forward(), the JavaScript of tools/explorer/model.js
// on the same 16-bit weights) runs every input; it fails (exit 1) when
//   - a head's weight differs from C's by over 1e-4 (absolute);
//   - a position's logits differ by over 1e-4 of that row's largest
//     magnitude in C, as they are or with the head ablated;
//   - the sentence's loss the page computes differs from C's by over 1e-4;
//   - the median of 20 full passes of a 64-token window (every
//     position's logits) takes over 150 ms;
//   - clicking through the page (a word chosen with the keyboard, a head's
//     map opened with the mouse, block 0's head 0 switched off with the
//     keyboard) does not show the loss C computes with that head
//     mean-ablated (to 1e-4), or a map does not open; typed words are not
//     split as the corpus splits them, an unknown one shown as <unk>;
//   - any text is drawn under 10 CSS px, at 1100 px or at phone width
//     (390 px), or the page itself scrolls sideways at phone width;
//   - the page logs an error or throws;
//   - PLANTED.html, the same page with the attention's 1/sqrt(d_head)
//     dropped (build.js --plant no-scale), passes the comparison: the
//     check's proof that it can fail.
// It prints the largest differences, the median pass and the time to the
// first map, and saves screenshots into SHOTDIR: word-chosen.png,
// head-map.png, head-ablated.png, phone.png.
'use strict';
const fs = require('fs');
const path = require('path');
const { launch } = require('../book/chromium.js');

const [pageArg, plantedArg, shotArg, chrome, ...dumpArgs] = process.argv.slice(2);
if (!pageArg || !plantedArg || !shotArg || !chrome || dumpArgs.length === 0) {
  console.error('usage: explorer.js EXPLORER.html PLANTED.html SHOTDIR CHROMIUM DUMP.json...');
  process.exit(2);
}
const TOL_W = 1e-4, TOL_LOGIT = 1e-4, TOL_LOSS = 1e-4, MAX_MS = 150, PASSES = 20;
const WIDTH = 1100, HEIGHT = 850, PHONE = 390, MIN_PX = 10;
const shots = path.resolve(shotArg);
fs.mkdirSync(shots, { recursive: true });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const f32 = (b64) => {
  const b = Buffer.from(b64.startsWith('f32le:') ? b64.slice(6) : b64, 'base64');
  const out = new Float32Array(b.length / 4);
  for (let k = 0; k < out.length; k++) out[k] = b.readFloatLE(4 * k);
  return out;
};

const dumps = dumpArgs.map((f) => ({ file: f, d: JSON.parse(fs.readFileSync(f, 'utf8')) }));
const { send, waitFor, finish, openPage: newPage } = launch(chrome, 'explorer check');

async function openPage(file, errors) {
  const s = await newPage(errors, false);
  await send('Runtime.enable', {}, s);
  await send('Page.enable', {}, s);
  await send('Emulation.setDeviceMetricsOverride', { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false }, s);
  const loaded = waitFor('Page.loadEventFired', s);
  await send('Page.navigate', { url: 'file://' + path.resolve(file) }, s);
  await loaded;
  const evaluate = async (expr) => {
    const r = await send('Runtime.evaluate', { expression: expr, awaitPromise: true, returnByValue: true }, s);
    if (r.exceptionDetails) {
      throw new Error(`evaluate: ${r.exceptionDetails.exception ? r.exceptionDetails.exception.description : r.exceptionDetails.text}`);
    }
    return r.result.value;
  };
  return { s, evaluate };
}

// The page's network for a dump: the same head count and seed.
async function netIndex(evaluate, d) {
  const nets = await evaluate('window.explorer.nets');
  const k = nets.findIndex((n) => n.heads === d.n_heads && n.seed === d.seed && n.V === d.V && n.T === d.T);
  if (k < 0) throw new Error(`the page has no network of ${d.n_heads} heads, seed ${d.seed}`);
  return k;
}

// The page's forward pass on a dump's inputs against C's: the largest
// differences. only: the number of inputs to run (all when 0).
async function compare(evaluate, d, only) {
  const k = await netIndex(evaluate, d);
  const worst = { w: 0, logit: 0, abl: 0, loss: 0, where: {} };
  const V = d.V;
  const rowRel = (js, c, S) => {
    let m = 0;
    for (let t = 0; t < S; t++) {
      let big = 0, diff = 0;
      for (let v = 0; v < V; v++) {
        big = Math.max(big, Math.abs(c[t * V + v]));
        diff = Math.max(diff, Math.abs(js[t * V + v] - c[t * V + v]));
      }
      m = Math.max(m, diff / big);
    }
    return m;
  };
  const inputs = only ? d.inputs.slice(0, only) : d.inputs;
  for (const inp of inputs) {
    const ab = [[d.ablation.block, d.ablation.head]];
    const r = await evaluate(`window.explorer.forward(${k}, ${JSON.stringify(inp.ids)}, [])`);
    const ra = await evaluate(`window.explorer.forward(${k}, ${JSON.stringify(inp.ids)}, ${JSON.stringify(ab)})`);
    const wj = f32(r.weights), wc = f32(inp.attention);
    if (wj.length !== wc.length) throw new Error(`${inp.name}: ${wj.length} weights, C wrote ${wc.length}`);
    let w = 0;
    for (let q = 0; q < wc.length; q++) w = Math.max(w, Math.abs(wj[q] - wc[q]));
    const lg = rowRel(f32(r.logits), f32(inp.logits), inp.S);
    const al = rowRel(f32(ra.logits), f32(inp.ablated_logits), inp.S);
    const ls = Math.max(Math.abs(r.loss - inp.loss), Math.abs(ra.loss - inp.ablated_loss));
    if (w > worst.w) worst.w = w, worst.where.w = inp.name;
    if (lg > worst.logit) worst.logit = lg, worst.where.logit = inp.name;
    if (al > worst.abl) worst.abl = al, worst.where.abl = inp.name;
    if (!(ls <= worst.loss)) worst.loss = ls, worst.where.loss = inp.name;
  }
  worst.n = inputs.length;
  worst.ok = worst.w <= TOL_W && worst.logit <= TOL_LOGIT && worst.abl <= TOL_LOGIT && worst.loss <= TOL_LOSS;
  return worst;
}
const fmt = (x) => x.toExponential(2);

// Every element whose own text renders under MIN_PX CSS px.
function smallText(min) {
  const bad = [];
  for (const e of document.querySelectorAll('body *')) {
    const own = [...e.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own || e.closest('[hidden]') || e.tagName === 'SCRIPT' || e.tagName === 'STYLE' || e.tagName === 'OPTION') continue;
    const px = parseFloat(getComputedStyle(e).fontSize);
    if (px < min) bad.push(`${e.tagName.toLowerCase()}.${e.className} "${e.textContent.slice(0, 20)}" ${px}px`);
  }
  return { n: document.querySelectorAll('body *').length, bad, wide: document.documentElement.scrollWidth > innerWidth + 1 };
}

async function key(s, k, code, vk, text) {
  await send('Input.dispatchKeyEvent', { type: text ? 'keyDown' : 'rawKeyDown', key: k, code, windowsVirtualKeyCode: vk, text }, s);
  await send('Input.dispatchKeyEvent', { type: 'keyUp', key: k, code, windowsVirtualKeyCode: vk }, s);
}

async function main() {
  const failures = [];
  const errors = [];
  const { s, evaluate } = await openPage(pageArg, errors);
  const firstMap = await evaluate('window.explorer && window.explorer.firstMap');
  if (!firstMap) failures.push('the page drew no map (window.explorer.firstMap unset)');

  // 1. the numbers, against C's
  for (const { file, d } of dumps) {
    const w = await compare(evaluate, d, 0);
    const line = `${d.n_heads} head${d.n_heads > 1 ? 's' : ''} (${path.basename(d.weights)}), ${w.n} inputs: ` +
      `weights within ${fmt(w.w)}, logits within ${fmt(w.logit)} of their row's largest, ` +
      `block ${d.ablation.block}'s head ${d.ablation.head} mean-ablated within ${fmt(w.abl)}, losses within ${fmt(w.loss)}`;
    console.log(`  ${line}`);
    if (!w.ok) failures.push(`${file}: ${line} (worst: ${JSON.stringify(w.where)})`);
  }

  // 2. the time: full passes of a 64-token window, the largest network
  const biggest = dumps.reduce((a, b) => (b.d.n_heads > a.d.n_heads ? b : a)).d;
  const win = biggest.inputs.find((x) => x.S === biggest.T);
  const k = await netIndex(evaluate, biggest);
  await evaluate(`window.explorer.time(${k}, ${JSON.stringify(win.ids)}, 3)`);
  const times = (await evaluate(`window.explorer.time(${k}, ${JSON.stringify(win.ids)}, ${PASSES})`)).sort((a, b) => a - b);
  const median = (times[PASSES / 2 - 1] + times[PASSES / 2]) / 2;
  console.log(`  time: a full pass of ${win.S} tokens (${biggest.n_heads} heads, every position's logits): ` +
    `median ${median.toFixed(1)} ms of ${PASSES} (${times[0].toFixed(1)} to ${times[PASSES - 1].toFixed(1)}); ` +
    `the first map drawn ${firstMap.toFixed(0)} ms after the page began loading`);
  if (!(median <= MAX_MS)) failures.push(`the median pass took ${median.toFixed(1)} ms, over ${MAX_MS} ms`);

  // 3. the page, clicked through: a word chosen with the keyboard
  const parsed = biggest.inputs[0];
  await evaluate(`(() => { const s = document.getElementById('preset'); s.value = '0'; s.dispatchEvent(new Event('change')); })()`);
  await evaluate(`document.getElementById('words-row').focus()`);
  for (let q = 0; q < 4; q++) await key(s, 'ArrowLeft', 'ArrowLeft', 37);
  const chosen = await evaluate(`document.querySelector('.word[aria-selected=true]').textContent`);
  const want = biggest.vocab[parsed.ids[parsed.S - 5]];
  if (chosen !== want) failures.push(`four left arrows from the last word chose "${chosen}", not "${want}"`);
  await evaluate('scrollTo(0, 0)');
  await sleep(50);
  const shot = async (name) => {
    const r = await send('Page.captureScreenshot', { format: 'png' }, s);
    fs.writeFileSync(path.join(shots, name), Buffer.from(r.data, 'base64'));
  };
  await shot('word-chosen.png');
  // one head's map, with the mouse
  const many = await netIndex(evaluate, biggest);
  const hb = biggest.n_heads > 1 ? 1 : 0;
  const box = await evaluate(`(() => { const b = document.querySelector('#net-${many} tbody tr:nth-child(${hb + 1}) th button');
      b.scrollIntoView({ block: 'center' }); const r = b.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`);
  for (const type of ['mousePressed', 'mouseReleased']) {
    await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 }, s);
  }
  await sleep(50);
  const map = await evaluate(`(() => { const m = document.getElementById('map'); m.scrollIntoView();
      return { hidden: m.hidden, cells: m.querySelectorAll('table.map td').length, title: document.getElementById('map-title').textContent,
        role: document.getElementById('map-role').textContent.length > 0, roles: window.explorer.roles }; })()`);
  if (map.hidden || map.cells !== parsed.S * parsed.S) failures.push(`a click on head 0.${hb} did not open its ${parsed.S} x ${parsed.S} map (${JSON.stringify(map)})`);
  if (map.roles && !map.role) failures.push(`the page has the run's measured roles, but head 0.${hb}'s map shows none`);
  await sleep(50);
  await shot('head-map.png');
  await key(s, 'Escape', 'Escape', 27);
  // block 0's head 0 off, with the keyboard: the loss C computes
  await evaluate(`document.querySelector('#net-${many} tbody tr:nth-child(1) input').focus()`);
  await key(s, ' ', 'Space', 32, ' ');
  await sleep(50);
  const shown = await evaluate('window.explorer.shown()');
  const abl = shown[many];
  if (abl.off.length !== 1 || abl.off[0] !== 0) failures.push(`a space on head 0.0's box switched off ${JSON.stringify(abl.off)}, not [0]`);
  const dl = Math.abs(abl.loss - parsed.ablated_loss);
  console.log(`  clicked through: "${chosen}" chosen with the keyboard, head 0.${hb}'s map opened with the mouse` +
    `${map.roles ? ' (its measured role beside it)' : ' (no measured roles in the page)'}, ` +
    `head 0.0 switched off with the keyboard: the loss shown ${abl.loss.toFixed(5)}, C's ${parsed.ablated_loss.toFixed(5)} (within ${fmt(dl)})`);
  if (!(dl <= TOL_LOSS)) failures.push(`with head 0.0 off the page shows the loss ${abl.loss}, C computes ${parsed.ablated_loss}`);
  await evaluate(`document.getElementById('net-${many}').scrollIntoView()`);
  await sleep(50);
  await shot('head-ablated.png');

  // typed words: one the vocabulary lacks is shown as <unk>
  const typed = await evaluate(`(() => { document.getElementById('words').value = 'The zorblax truck blocked the street.';
      document.getElementById('typed').requestSubmit();
      return { words: [...document.querySelectorAll('.word')].map((b) => b.textContent),
        note: document.getElementById('unk-note').textContent }; })()`);
  const wantTyped = ['the', '<unk> (zorblax)', 'truck', 'blocked', 'the', 'street', '.'];
  if (JSON.stringify(typed.words) !== JSON.stringify(wantTyped) || !typed.note.includes('zorblax')) {
    failures.push(`typed words: the page shows ${JSON.stringify(typed.words)} (${typed.note}), not ${JSON.stringify(wantTyped)} with the unknown word named`);
  } else console.log(`  typed words: ${typed.words.join(' ')}; "${typed.note}"`);

  // 4. text sizes, at the default width and at phone width
  for (const width of [WIDTH, PHONE]) {
    await send('Emulation.setDeviceMetricsOverride', { width, height: HEIGHT, deviceScaleFactor: 1, mobile: width === PHONE }, s);
    await evaluate(`(() => { const b = document.querySelector('#net-${many} th.head button'); b.click(); })()`);
    await sleep(100);
    const t = await evaluate(`(${smallText.toString()})(${MIN_PX})`);
    console.log(`  at ${width} px: ${t.n} elements, ${t.bad.length} with text under ${MIN_PX} CSS px${t.wide ? ', the page scrolls sideways' : ''}`);
    if (t.bad.length) failures.push(`at ${width} px, text under ${MIN_PX} px: ${t.bad.slice(0, 5).join('; ')}`);
    if (t.wide) failures.push(`at ${width} px the page is wider than the window`);
    if (width === PHONE) {
      await evaluate('scrollTo(0, 0)');
      await sleep(50);
      await shot('phone.png');
    }
  }
  for (const e of errors) failures.push(e);

  // 5. the planted error must be caught
  const perrors = [];
  const planted = await openPage(plantedArg, perrors);
  let caught = true;
  for (const { d } of dumps) {
    const w = await compare(planted.evaluate, d, 2);
    console.log(`  planted (1/sqrt(d_head) dropped), ${d.n_heads} head${d.n_heads > 1 ? 's' : ''}: weights off by ${fmt(w.w)}, ` +
      `logits by ${fmt(w.logit)}: ${w.ok ? 'NOT caught' : 'caught'}`);
    caught = caught && !w.ok;
  }
  if (!caught) failures.push('the planted error was not caught on every network');
  console.log(`  screenshots in ${path.relative(process.cwd(), shots) || shots}/: word-chosen.png, head-map.png, head-ablated.png, phone.png`);
  for (const f of failures) console.log(`  FAIL: ${f}`);
  finish(failures.length ? 1 : 0);
}
main().catch((e) => {
  console.error(`explorer check: ${e.message}`);
  finish(1);
});
