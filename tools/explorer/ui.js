// ui.js: the head explorer's page (tools/explorer/build.js inlines it
// after model.js). It reads the embedded data (#explorer-data: the
// networks' 16-bit weights in base64, their mean-ablation means, the
// vocabulary, the preset sentences), decodes and runs each network with
// ExplorerModel, and draws: the words (one chosen), each network's heads'
// weights from the chosen word over the words before it, one head's whole
// map on demand, the next word's top candidates and the sentence's loss,
// with any heads switched off (mean-ablated).
//
// For tools/checks/explorer.js it exposes window.explorer:
//   nets                      each network's sizes
//   forward(n, ids, ablate)   network n's forward pass on ids, with the
//                             heads ablate ([[block, head], ...]) mean-
//                             ablated: { weights, logits } as base64 of
//                             float32 little-endian, and loss
//   time(n, ids, passes)      the wall time of each of `passes` full
//                             passes (every position's logits), in ms
//   firstMap                  performance.now() when the first map was
//                             drawn (ms after the page began loading)
//   roles                     whether the page has the run's measured
//                             role of every head (build.js --run)
//   shown()                   what the page shows: each network's loss
//                             as drawn and its heads switched off
'use strict';
(function () {
  const M = ExplorerModel;
  const data = JSON.parse(document.getElementById('explorer-data').textContent);
  const V = data.vocab.length;
  const index = new Map(data.vocab.map((w, i) => [w, i]));
  const TOP = 8;

  function bytesOf(b64) {
    const s = atob(b64), a = new Uint8Array(s.length);
    for (let k = 0; k < s.length; k++) a[k] = s.charCodeAt(k);
    return a;
  }
  function f32Of(b64) {
    const b = bytesOf(b64);
    const dv = new DataView(b.buffer), out = new Float32Array(b.length / 4);
    for (let k = 0; k < out.length; k++) out[k] = dv.getFloat32(4 * k, true);
    return out;
  }
  function b64Of(f) {
    const b = new Uint8Array(f.length * 4), dv = new DataView(b.buffer);
    for (let k = 0; k < f.length; k++) dv.setFloat32(4 * k, f[k], true);
    let s = '';
    for (let k = 0; k < b.length; k += 0x8000) s += String.fromCharCode.apply(null, b.subarray(k, k + 0x8000));
    return btoa(s);
  }

  const nets = data.nets.map((n) => {
    const net = M.parseWeights(bytesOf(n.weights));
    return { info: n, net, means: f32Of(n.means), off: new Set(), intact: null, now: null };
  });

  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of kids) if (c != null) e.append(c);
    return e;
  };
  const $ = (id) => document.getElementById(id);

  // the state: the sentence (ids, the words as typed), the chosen word,
  // the open map (network n, head k = l*h + i)
  const st = { ids: [], text: [], pos: 0, map: null };

  function preset(p) {
    const words = p.ids.map((id) => data.vocab[id]);
    const label = p.name === 'parsed' ? 'The lesson\'s sentence, as the parser links it'
      : p.name === 'lesson' ? 'The lesson\'s sentence'
        : `A ${p.name.replace('test', 'test window')} (${p.ids.length} tokens)`;
    return { label: `${label}: ${words.slice(0, 9).join(' ')}${words.length > 9 ? ' ...' : ''}`, ids: p.ids, text: words };
  }
  const presets = data.presets.map(preset);

  function setSentence(ids, text) {
    st.ids = ids.slice(0, nets[0].net.T);
    st.text = text.slice(0, st.ids.length);
    st.pos = st.ids.length - 1;
    st.map = null;
    for (const n of nets) n.intact = null;
    const unk = st.text.filter((w, i) => st.ids[i] === 0 && w !== '<unk>');
    $('unk-note').textContent = (text.length > st.ids.length ? `Only the first ${st.ids.length} tokens are kept (the context). ` : '') +
      (unk.length ? `Not in the ${V}-word vocabulary, read as <unk>: ${unk.join(', ')}.` : '');
    run();
  }

  // every network's pass: as it is (kept per sentence) and with its heads off
  function run() {
    for (const n of nets) {
      if (!n.intact) n.intact = M.forward(n.net, st.ids);
      n.now = n.off.size ? M.forward(n.net, st.ids, { ablate: [...n.off], means: n.means }) : n.intact;
    }
    draw();
  }

  function shade(w) {
    return `rgba(31, 79, 168, ${Math.min(1, Math.max(0, w)).toFixed(3)})`;
  }
  // a word as the model reads it: its vocabulary entry (lowercased), or
  // <unk> with the word as typed
  function wordLabel(t) {
    const w = st.text[t];
    return st.ids[t] !== 0 ? data.vocab[st.ids[t]] : w !== '<unk>' ? `<unk> (${w})` : w;
  }

  function drawWords() {
    const row = $('words-row');
    row.replaceChildren();
    st.ids.forEach((id, t) => {
      const b = el('button', {
        type: 'button', class: 'word' + (id === 0 ? ' unk' : ''), role: 'option', 'aria-selected': String(t === st.pos),
        tabindex: '-1', title: id === 0 ? 'not in the vocabulary: <unk>' : `token ${id}`, text: wordLabel(t),
        onclick: () => { st.pos = t; draw(); row.children[t].focus(); },
      });
      row.append(b);
    });
  }

  function drawNet(n, k) {
    const { L, nHeads: h } = n.net, S = st.ids.length, t = st.pos;
    const box = el('div', { class: 'net', id: `net-${k}` });
    box.append(el('h2', { text: `${n.info.label} a block (${L} blocks: ${L * h} heads in all)` }));
    const l0 = M.loss(n.intact.logits, st.ids, V), l1 = M.loss(n.now.logits, st.ids, V);
    const lossP = el('p', { class: 'loss', 'data-loss': String(l1) });
    if (S < 2) lossP.textContent = 'The sentence\'s loss needs two words or more.';
    else if (n.off.size) {
      lossP.append(`The sentence's loss: ${l1.toFixed(3)} nats with ${n.off.size} head${n.off.size > 1 ? 's' : ''} off, `,
        el('span', { class: l1 > l0 ? 'up' : '', text: `${l1 >= l0 ? '+' : ''}${(l1 - l0).toFixed(3)}` }),
        ` from ${l0.toFixed(3)} with every head.`);
    } else lossP.textContent = `The sentence's loss: ${l0.toFixed(3)} nats a word (each word predicted from those before it).`;
    box.append(lossP);
    box.append(el('h3', { text: `The next word after "${wordLabel(t)}"${n.off.size ? ' (with every head: in grey)' : ''}` }));
    const grid = el('div', { class: 'next' });
    const best = M.top(n.now.logits, t, V, TOP);
    const p0 = best[0] ? best[0].p : 1;
    for (const b of best) {
      const was = Math.exp(M.logSoftmaxAt(n.intact.logits, t, V, b.id));
      grid.append(el('span', { text: data.vocab[b.id] }),
        el('span', {}, el('div', { class: 'bar', style: `width:${(100 * b.p / p0).toFixed(1)}%` })),
        el('span', { class: 'num' }, `${(100 * b.p).toFixed(1)} %`,
          n.off.size ? el('span', { class: 'was', text: ` (${(100 * was).toFixed(1)})` }) : null));
    }
    box.append(grid);
    if (t + 1 < S) {
      const lp = M.logSoftmaxAt(n.now.logits, t, V, st.ids[t + 1]);
      box.append(el('p', { class: 'note', text: `The sentence's own next word, "${wordLabel(t + 1)}": ${(100 * Math.exp(lp)).toFixed(2)} %.` }));
    }
    box.append(el('h3', { text: `Each head's weights from "${wordLabel(t)}" over the words up to it` }));
    const table = el('table', { class: 'heads' });
    const head = el('tr', {}, el('th', { scope: 'col', text: 'head' }), el('th', { scope: 'col', text: 'on' }));
    for (let j = 0; j <= t; j++) head.append(el('th', { scope: 'col', class: 'key' + (j === t ? ' self' : ''), title: wordLabel(j), text: wordLabel(j) }));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    for (let q = 0; q < L * h; q++) {
      const l = Math.floor(q / h), i = q % h, off = n.off.has(q);
      const open = st.map && st.map.n === k && st.map.q === q;
      const tr = el('tr', { class: (off ? 'off' : '') + (open ? ' open' : '') });
      tr.append(el('th', { class: 'head', scope: 'row' }, el('button', {
        type: 'button', 'aria-label': `block ${l} head ${i}: its whole map`, 'aria-pressed': String(!!open),
        text: `${l}.${i}`, onclick: () => { st.map = { n: k, q }; draw(); $('map').scrollIntoView({ block: 'nearest' }); },
      })));
      const box2 = el('input', { type: 'checkbox', 'aria-label': `block ${l} head ${i} on` });
      box2.checked = !off;
      box2.addEventListener('change', () => {
        if (box2.checked) n.off.delete(q); else n.off.add(q);
        run();
        const again = document.querySelector(`#net-${k} tbody tr:nth-child(${q + 1}) input`);
        if (again) again.focus();
      });
      tr.append(el('td', { class: 'toggle' }, box2));
      const A = n.now.weights, base = (q * S + t) * S;
      for (let j = 0; j <= t; j++) {
        const w = A[base + j];
        tr.append(el('td', { class: 'w', style: `background:${shade(w)};color:${w > 0.5 ? '#fff' : '#1a1a1a'}`,
          title: `${l}.${i}: "${wordLabel(t)}" -> "${wordLabel(j)}" ${w.toFixed(3)}`, text: w >= 0.05 ? String(Math.round(100 * w)) : '' }));
      }
      body.append(tr);
    }
    table.append(body);
    box.append(el('div', { class: 'scroll' }, table));
    box.append(el('p', { class: 'note', text: 'Cells: the weight in hundredths (blank under 0.05). Click a head for its whole map; untick it to switch it off: its output becomes its mean over the measurement windows.' }));
    return box;
  }

  function drawMap() {
    const sec = $('map');
    if (!st.map) { sec.hidden = true; return; }
    const n = nets[st.map.n], { nHeads: h } = n.net, q = st.map.q, S = st.ids.length;
    sec.hidden = false;
    $('map-title').textContent = `${n.info.label}: block ${Math.floor(q / h)}, head ${q % h}, its whole map` +
      (n.off.has(q) ? ' (switched off: its output is its mean; its weights as computed)' : '');
    const table = el('table', { class: 'map' });
    const hr = el('tr', {}, el('th'));
    for (let j = 0; j < S; j++) hr.append(el('th', { scope: 'col', text: wordLabel(j) }));
    table.append(el('thead', {}, hr));
    const body = el('tbody'), A = n.now.weights;
    for (let t = 0; t < S; t++) {
      const tr = el('tr', {}, el('th', { scope: 'row', class: 'q' + (t === st.pos ? ' sel' : ''), text: wordLabel(t) }));
      for (let j = 0; j < S; j++) {
        const w = j <= t ? A[(q * S + t) * S + j] : 0;
        tr.append(el('td', { style: j <= t ? `background:${shade(w)}` : 'background:#fafafa', title: j <= t ? `"${wordLabel(t)}" -> "${wordLabel(j)}" ${w.toFixed(3)}` : '' }));
      }
      body.append(tr);
    }
    table.append(body);
    $('map-grid').replaceChildren(table);
    drawRole(n, q);
  }

  // the head's role measured in the run (build.js --run), if the page has it
  const REL = { noun_det: 'noun \u2192 its determiner', noun_adj: 'noun \u2192 its adjective',
    prep_obj: 'object \u2192 its preposition', verb_subj: 'verb \u2192 its subject pronoun', noun_poss: 'noun \u2192 its possessive' };
  function drawRole(n, q) {
    const box = $('map-role');
    box.replaceChildren();
    const r = n.info.roles && n.info.roles[q];
    if (!r) return;
    box.append(el('h3', { text: `Its role, measured in the run (${data.run}) on the validation windows` }));
    const first = r.bestOffset === 'first' ? 'the first token' : `offset ${r.bestOffset}`;
    box.append(el('p', { text: `Its heaviest weight falls at ${first} in ${(100 * r.bestShare).toFixed(1)} % of the rows: ` +
      (r.positional ? 'positional by Voita\'s rule (90 % or more).' : 'not positional by Voita\'s rule (under 90 %).') }));
    if (r.rel) {
      box.append(el('p', { text: `Its best relation (of the tag rules): ${REL[r.rel.name] || r.rel.name}, found in ${(100 * r.rel.score).toFixed(1)} % ` +
        `of ${r.rel.cases} cases, against ${(100 * r.rel.baseline).toFixed(1)} % for the best fixed offset (${r.rel.k}): a margin of ` +
        `${r.rel.margin >= 0 ? '+' : ''}${r.rel.margin.toFixed(3)}.` }));
    }
    const t = el('table', { class: 'profile' });
    const labels = [...Array(9).keys()].map(String).concat(['first']);
    t.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'offset' }), ...labels.map((x) => el('th', { scope: 'col', text: x })))));
    const row = (name, v) => el('tr', {}, el('th', { scope: 'row', text: name }),
      ...v.map((x) => el('td', { style: `background:${shade(x)};color:${x > 0.5 ? '#fff' : '#1a1a1a'}`, text: (100 * x).toFixed(0) })));
    t.append(el('tbody', {}, row('mean weight (%)', r.mean), row('heaviest there (%)', r.top)));
    box.append(el('div', { class: 'scroll' }, t));
  }

  function draw() {
    drawWords();
    $('nets').replaceChildren(...nets.map(drawNet));
    drawMap();
    if (!window.explorer.firstMap) window.explorer.firstMap = performance.now();
  }

  // the controls
  const sel = $('preset');
  presets.forEach((p, k) => sel.append(el('option', { value: String(k), text: p.label })));
  sel.addEventListener('change', () => { const p = presets[+sel.value]; setSentence(p.ids, p.text); });
  $('typed').addEventListener('submit', (e) => {
    e.preventDefault();
    const toks = M.encode($('words').value, index);
    if (toks.length) setSentence(toks.map((x) => x.id), toks.map((x) => x.text));
  });
  $('words-row').addEventListener('keydown', (e) => {
    const d = { ArrowLeft: -1, ArrowRight: 1, Home: -1e9, End: 1e9 }[e.key];
    if (d === undefined) return;
    e.preventDefault();
    st.pos = Math.max(0, Math.min(st.ids.length - 1, st.pos + d));
    draw();
    $('words-row').children[st.pos].focus();
  });
  $('words-row').addEventListener('focus', (e) => { if (e.target === $('words-row') && $('words-row').children[st.pos]) $('words-row').children[st.pos].focus(); });
  $('map-close').addEventListener('click', () => { st.map = null; draw(); });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && st.map) { st.map = null; draw(); } });
  $('about').textContent = `The networks: ${nets.map((n) => `${n.info.label} (${n.info.file}, seed ${n.info.seed}, ${n.net.nParams} parameters)`).join('; ')}; ` +
    `size ${data.size}, a vocabulary of ${V} words, a context of ${nets[0].net.T} tokens. The means of the heads' outputs come from ` +
    `${nets[0].info.meansWindows} measurement windows of the validation text, computed by the C code (heads_means()).` +
    (data.planted ? ` PLANTED ERROR (${data.planted}): this page is a check's decoy.` : '');

  window.explorer = {
    nets: nets.map((n) => ({ heads: n.net.nHeads, L: n.net.L, C: n.net.C, T: n.net.T, V: n.net.V, seed: n.net.seed })),
    forward(k, ids, ablate) {
      const n = nets[k], h = n.net.nHeads;
      const r = M.forward(n.net, ids, { ablate: (ablate || []).map(([l, i]) => l * h + i), means: n.means });
      return { weights: b64Of(r.weights), logits: b64Of(r.logits), loss: M.loss(r.logits, ids, V) };
    },
    time(k, ids, passes) {
      const out = [];
      for (let p = 0; p < passes; p++) {
        const t0 = performance.now();
        M.forward(nets[k].net, ids);
        out.push(performance.now() - t0);
      }
      return out;
    },
    firstMap: 0,
    roles: nets.every((n) => !!n.info.roles),
    shown() {
      return nets.map((n, k) => ({ loss: Number($(`net-${k}`).querySelector('.loss').dataset.loss), off: [...n.off] }));
    },
  };
  setSentence(presets[0].ids, presets[0].text);
})();
