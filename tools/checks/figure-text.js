#!/usr/bin/env node
// figure-text.js: the size at which the HTML book shows each figure's
// lettering, in a real browser (tools/checks/74-browser.sh runs it).
//
//   node tools/checks/figure-text.js BOOK.html CHROMIUM SIZES [PLANTED.svg PLANTED_PT]
//
// SIZES lists "NAME.svg SMALLEST_PT" for each figure: the smallest glyph
// its PDF prints (tools/book/fontsizes.c; the SVG is pdftocairo's copy of
// that PDF, one SVG unit to a point). Chromium opens BOOK.html at the
// width browser_check.js uses (1100 x 850 CSS px, the book's default),
// finds each figure's <img> (a data: SVG, matched to its file by content)
// and the width the page shows it at; then opens that SVG on its own, as
// an inline <svg> of that width, and takes the box of every glyph (a
// <use> of a glyph symbol: getBoundingClientRect on the page against
// getBBox in SVG units). The smallest text a figure renders is then
// SMALLEST_PT x the smallest of those ratios, in CSS px. It fails when
// that is under 10 CSS px, or when an <img> does not keep the SVG's
// proportions (its shown height / width off the viewBox's by over 1 %).
// PLANTED.svg, shown at the default width of a figure of its width (the
// same share of the column as of the printed text, as tools/book/book.lua
// sets it) after the book's first figure, must be caught: the check's
// proof.
'use strict';
const fs = require('fs');
const path = require('path');
const { launch } = require('../book/chromium.js');

const [bookArg, chrome, sizesArg, plantedArg, plantedPt] = process.argv.slice(2);
if (!bookArg || !chrome || !sizesArg) {
  console.error('usage: figure-text.js BOOK.html CHROMIUM SIZES [PLANTED.svg PLANTED_PT]');
  process.exit(2);
}
const MIN_PX = 10, WIDTH = 1100, HEIGHT = 850;
const TEXTWIDTH_PT = 16.4 / 2.54 * 72;   // as tools/book/book.lua
const book = path.resolve(bookArg);
const html = fs.readFileSync(book, 'utf8');

// each figure's SVG text and its smallest printed size, by content
const byText = new Map();
for (const line of fs.readFileSync(sizesArg, 'utf8').split('\n')) {
  const [file, pt] = line.trim().split(/\s+/);
  if (!file) continue;
  byText.set(fs.readFileSync(file, 'utf8'), { name: path.basename(file, '.svg'), pt: Number(pt) });
}
const shown = [];
for (const m of html.matchAll(/<img [^>]*src="data:image\/svg\+xml;base64,([^"]+)"/g)) {
  const fig = byText.get(Buffer.from(m[1], 'base64').toString('utf8'));
  shown.push(fig || { name: null, pt: NaN });
}
let planted = null;
if (plantedArg) {
  const text = fs.readFileSync(plantedArg, 'utf8');
  const w = Number((text.match(/<svg[^>]*\swidth="([\d.]+)pt"/) || [])[1]);
  const pct = Math.max(30, Math.min(100, Math.round(w / TEXTWIDTH_PT * 100)));
  planted = { src: 'data:image/svg+xml;base64,' + Buffer.from(text).toString('base64'), pct, pt: Number(plantedPt) };
}

const { send, waitFor, finish } = launch(chrome, 'figure-text');

// In the page: each data: SVG image's shown size, then the SVG on its own
// at that width, and the smallest ratio of a glyph's shown height to its
// height in SVG units (points).
function measureAll(planted) {
  const imgs = [...document.querySelectorAll('img[src^="data:image/svg+xml"]')];
  if (planted) {
    const fig = document.createElement('figure');
    const img = document.createElement('img');
    img.src = planted.src;
    img.setAttribute('width', planted.pct + '%');
    fig.appendChild(img);
    imgs[0].closest('figure').after(fig);
    imgs.push(img);
  }
  return Promise.all(imgs.map((img) => img.decode().catch(() => null))).then(() => imgs.map((img) => {
    const r = img.getBoundingClientRect();
    const text = atob(img.src.slice(img.src.indexOf(',') + 1));
    const box = document.createElement('div');
    box.style.cssText = 'position:absolute;left:0;top:0;';
    box.innerHTML = text.slice(text.indexOf('<svg'));
    document.body.appendChild(box);
    const svg = box.querySelector('svg');
    const vb = svg.viewBox.baseVal;
    svg.setAttribute('width', r.width + 'px');
    svg.setAttribute('height', (r.width * vb.height / vb.width) + 'px');
    let least = Infinity, glyphs = 0;
    for (const u of svg.querySelectorAll('use')) {
      const href = u.getAttribute('xlink:href') || u.getAttribute('href') || '';
      if (!href.startsWith('#glyph')) continue;
      const bb = u.getBBox();
      if (bb.height < 0.5) continue;   // a space or a rule: no height to measure
      const sr = u.getBoundingClientRect();
      glyphs++;
      least = Math.min(least, sr.height / bb.height);
    }
    box.remove();
    return { shownW: r.width, shownH: r.height, ratio: vb.height / vb.width, vbW: vb.width, least, glyphs };
  }));
}

async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId: s } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Page.enable', {}, s);
  await send('Emulation.setDeviceMetricsOverride',
    { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false }, s);
  const loaded = waitFor('Page.loadEventFired', s);
  await send('Page.navigate', { url: 'file://' + book }, s);
  await loaded;
  const r = await send('Runtime.evaluate', {
    expression: `(${measureAll.toString()})(${JSON.stringify(planted)})`,
    awaitPromise: true, returnByValue: true,
  }, s);
  if (r.exceptionDetails) throw new Error(`evaluate: ${r.exceptionDetails.exception ? r.exceptionDetails.exception.description : r.exceptionDetails.text}`);
  const res = r.result.value;
  const failures = [];
  let smallest = Infinity, smallestName = '';
  const figs = planted ? shown.concat([{ name: 'planted', pt: planted.pt }]) : shown;
  if (res.length !== figs.length) failures.push(`the page shows ${res.length} SVG images, the HTML holds ${figs.length}`);
  res.forEach((m, i) => {
    const f = figs[i] || { name: null };
    const name = f.name || `image ${i}`;
    if (!f.name) { failures.push(`${name}: its SVG matches no figure under build/plots`); return; }
    const px = f.pt * m.least;
    const line = `${name}: shown ${m.shownW.toFixed(0)} px wide (${(m.shownW / m.vbW).toFixed(3)} px/pt), ` +
      `smallest text ${f.pt} pt -> ${px.toFixed(2)} CSS px (${m.glyphs} glyphs)`;
    if (f.name === 'planted') {
      if (px < MIN_PX) console.log(`  ${line}: caught, under ${MIN_PX} px`);
      else failures.push(`${line}: NOT caught`);
      return;
    }
    if (!(m.glyphs > 0) || !(px >= MIN_PX)) failures.push(`${line}: under ${MIN_PX} CSS px`);
    if (Math.abs(m.shownH / m.shownW - m.ratio) > 0.01 * m.ratio) {
      failures.push(`${name}: shown ${m.shownW.toFixed(1)} x ${m.shownH.toFixed(1)} px, not the SVG's proportions (height/width ${m.ratio.toFixed(4)})`);
    }
    if (px < smallest) { smallest = px; smallestName = name; }
    if (process.env.VERBOSE) console.log(`  ${line}`);
  });
  console.log(`  ${res.length - (planted ? 1 : 0)} figure SVGs, each opened on its own at its shown width; smallest text ${smallest.toFixed(2)} CSS px (${smallestName}); proportions kept`);
  for (const f of failures) console.log(`  FAIL: ${f}`);
  finish(failures.length ? 1 : 0);
}
main().catch((e) => {
  console.error(`figure-text: ${e.message}`);
  finish(1);
});
