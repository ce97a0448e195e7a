#!/usr/bin/env node
// browser_check.js: open the HTML book in a real browser (Debian's
// Chromium, headless) and check what a reader would see.
//
//   node tools/book/browser_check.js BOOK.html SHOTDIR [CHROMIUM]
//
// It talks to Chromium over the DevTools protocol through a pipe
// (tools/book/chromium.js), so it needs no npm package. It fails (exit 1) when
//   - an image did not load, or has a natural width or height of 0;
//   - the MathML is not laid out as mathematics (a fraction's numerator
//     must sit above its denominator), or a <math> element has no box;
//   - the page logged a console error or threw an exception, or the
//     browser logged an error (a resource that failed to load, say);
//   - a table is wider than the column, or a figure's click-to-enlarge
//     does not enlarge it;
// and it saves a screenshot of the first screen of the title page and of
// every chapter (SHOTDIR/00-title.png, SHOTDIR/<chapter id>.png), of each
// figure (SHOTDIR/figures/) and of a figure enlarged (zoomed-figure.png).
'use strict';
const fs = require('fs');
const path = require('path');
const { launch } = require('./chromium.js');

const [bookArg, shotArg, chromeArg] = process.argv.slice(2);
if (!bookArg || !shotArg) {
  console.error('usage: browser_check.js BOOK.html SHOTDIR [CHROMIUM]');
  process.exit(2);
}
const book = path.resolve(bookArg);
const shots = path.resolve(shotArg);
const chrome = chromeArg || '/usr/bin/chromium';
if (!fs.existsSync(book)) {
  console.error(`browser check: ${book} does not exist (make book first)`);
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });
const WIDTH = 1100, HEIGHT = 850;

const { send, waitFor, finish, openPage } = launch(chrome, 'browser check');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const failures = [];
  const errors = [];
  const s = await openPage(errors, true);
  await send('Runtime.enable', {}, s);
  await send('Log.enable', {}, s);
  await send('Page.enable', {}, s);
  await send('Emulation.setDeviceMetricsOverride',
    { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false }, s);
  const loaded = waitFor('Page.loadEventFired', s);
  await send('Page.navigate', { url: 'file://' + book }, s);
  await loaded;

  const evaluate = async (expr) => {
    const r = await send('Runtime.evaluate',
      { expression: expr, awaitPromise: true, returnByValue: true }, s);
    if (r.exceptionDetails) throw new Error(`evaluate: ${r.exceptionDetails.text} in ${expr.slice(0, 60)}`);
    return r.result.value;
  };

  // Images: every one decoded, with a natural size.
  const images = await evaluate(`Promise.all([...document.images].map((img, i) =>
      img.decode().then(() => null, () => null).then(() => ({
        i, alt: (img.alt || '').slice(0, 60), complete: img.complete,
        w: img.naturalWidth, h: img.naturalHeight,
        shown: img.getBoundingClientRect().width })))) `);
  for (const im of images) {
    if (!im.complete || im.w === 0 || im.h === 0) {
      failures.push(`image ${im.i} ("${im.alt}") did not load: natural size ${im.w} x ${im.h}`);
    } else if (im.shown === 0) {
      failures.push(`image ${im.i} ("${im.alt}") is not shown (width 0 on the page)`);
    }
  }
  console.log(`  ${images.length} images, every one loaded with a natural size: ${images.every((im) => im.w > 0 && im.h > 0) ? 'yes' : 'NO'}`);

  // MathML: laid out as mathematics, not as a line of text.
  const math = await evaluate(`(() => {
      const all = [...document.querySelectorAll('math')];
      const empty = all.filter((m) => { const r = m.getBoundingClientRect(); return r.width === 0 || r.height === 0; }).length;
      const fracs = [...document.querySelectorAll('mfrac')];
      const stacked = fracs.filter((f) => {
        if (f.children.length !== 2) return false;
        const a = f.children[0].getBoundingClientRect(), b = f.children[1].getBoundingClientRect();
        return a.height > 0 && b.height > 0 && a.bottom <= b.top + 1;
      }).length;
      const sqrt = [...document.querySelectorAll('msqrt, mroot')].length;
      // a displayed formula that scrolls up and down shows a scroll bar
      const scrolls = [...document.querySelectorAll('math[display="block"]')]
        .filter((m) => getComputedStyle(m).overflowY !== 'hidden' && m.scrollHeight > m.clientHeight + 1).length;
      return { count: all.length, empty, fracs: fracs.length, stacked, sqrt, scrolls };
    })()`);
  console.log(`  ${math.count} <math> elements (${math.empty} without a box); ${math.stacked} of ${math.fracs} fractions stacked`);
  if (math.count === 0) failures.push('the book has no MathML at all');
  if (math.scrolls > 0) failures.push(`${math.scrolls} displayed formula(s) show a vertical scroll bar`);
  if (math.empty > 0) failures.push(`${math.empty} <math> element(s) have no box on the page`);
  if (math.fracs > 0 && math.stacked !== math.fracs) {
    failures.push(`MathML not rendered: only ${math.stacked} of ${math.fracs} fractions have their numerator above the denominator`);
  }

  // Tables fit the column.
  const wide = await evaluate(`[...document.querySelectorAll('table')].map((t, i) => {
      const col = document.body.clientWidth - parseFloat(getComputedStyle(document.body).paddingLeft)
                - parseFloat(getComputedStyle(document.body).paddingRight);
      const cap = t.querySelector('caption');
      return { i, w: Math.round(t.getBoundingClientRect().width), col: Math.round(col),
               name: cap ? cap.textContent.slice(0, 40) : '(no caption)' };
    }).filter((t) => t.w > t.col + 1)`);
  for (const t of wide) failures.push(`table "${t.name}" is ${t.w} px wide, wider than the ${t.col} px column`);

  // A figure enlarges on click and goes back on a second click.
  const zoom = await evaluate(`(async () => {
      const label = document.querySelector('figure label.zoom');
      if (!label) return { none: true };
      const img = label.querySelector('img');
      label.scrollIntoView();
      const before = img.getBoundingClientRect().width;
      label.click();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const r = img.getBoundingClientRect();
      const big = { w: r.width, h: r.height };
      return { before, big, vw: innerWidth, vh: innerHeight };
    })()`);
  if (zoom.none) {
    failures.push('no figure can be enlarged (no figure label.zoom)');
  } else {
    const shot = await send('Page.captureScreenshot', { format: 'png' }, s);
    fs.writeFileSync(path.join(shots, 'zoomed-figure.png'), Buffer.from(shot.data, 'base64'));
    if (!(zoom.big.w >= zoom.vw * 0.95 && zoom.big.h >= zoom.vh * 0.95 && zoom.big.w > zoom.before)) {
      failures.push(`a click did not enlarge the first figure (${Math.round(zoom.before)} px wide before, ` +
                    `${Math.round(zoom.big.w)} x ${Math.round(zoom.big.h)} after, window ${zoom.vw} x ${zoom.vh})`);
    }
    const back = await evaluate(`(async () => {
        const label = document.querySelector('figure label.zoom');
        label.click();
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        return label.querySelector('img').getBoundingClientRect().width;
      })()`);
    if (Math.abs(back - zoom.before) > 1) failures.push(`a second click did not restore the figure (${back} px, was ${zoom.before})`);
    console.log(`  click to enlarge: ${Math.round(zoom.before)} px -> ${Math.round(zoom.big.w)} x ${Math.round(zoom.big.h)} px, and back`);
  }

  // Screenshots: the title page and the first screen of every chapter.
  const heads = await evaluate(`[...document.querySelectorAll('h1[id]')].map((h) => h.id)`);
  let n = 0;
  const take = async (name, id) => {
    await evaluate(id ? `document.getElementById(${JSON.stringify(id)}).scrollIntoView()` : 'scrollTo(0, 0)');
    await sleep(50);
    const shot = await send('Page.captureScreenshot', { format: 'png' }, s);
    fs.writeFileSync(path.join(shots, name + '.png'), Buffer.from(shot.data, 'base64'));
    n++;
  };
  await take('00-title', null);
  for (const id of heads) {
    if (id.startsWith('ch:')) await take(id.replace(/[^A-Za-z0-9_-]/g, '-'), id);
  }
  console.log(`  ${n} screenshots in ${path.relative(process.cwd(), shots) || shots}/ (the title page and each chapter's first screen)`);
  // and each figure as the reader sees it, for a reviewer's eye
  const figs = await evaluate(`[...document.querySelectorAll('figure[id]')].map((f) => f.id)`);
  fs.mkdirSync(path.join(shots, 'figures'), { recursive: true });
  for (const id of figs) {
    await evaluate(`document.getElementById(${JSON.stringify(id)}).scrollIntoView()`);
    await sleep(50);
    const shot = await send('Page.captureScreenshot', { format: 'png' }, s);
    fs.writeFileSync(path.join(shots, 'figures', id.replace(/[^A-Za-z0-9_-]/g, '-') + '.png'),
                     Buffer.from(shot.data, 'base64'));
  }
  console.log(`  ${figs.length} figure screenshots in ${path.relative(process.cwd(), shots) || shots}/figures/`);
  if (n < 2) failures.push('no chapter heading (h1 with an id ch:...) to take a screenshot of');

  await sleep(200); // late console messages
  for (const e of errors) failures.push(e);
  if (errors.length === 0) console.log('  no console errors, no exceptions, no browser errors');
  return failures;
}

main().then((failures) => {
  for (const f of failures) console.log(`  FAIL: ${f}`);
  finish(failures.length ? 1 : 0);
}, (err) => {
  console.log(`  FAIL: the browser check itself failed: ${err.message}`);
  finish(1);
});
