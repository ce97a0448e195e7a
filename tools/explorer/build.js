#!/usr/bin/env node
// build.js: the head explorer, one self-contained HTML file (make
// explorer, tools/mk/explorer.mk).
//
//   node tools/explorer/build.js --out OUT.html [--plant no-scale] [--run RUN_DIR]
//        --net WEIGHTS.f16 DUMP.json [--net WEIGHTS.f16 DUMP.json ...]
//
// Each --net is one kept network of chapter 8's run (its 16-bit file,
// tools/runs/lm/weights16.c) and what `lm-experiment --explore-dump`
// wrote for it (tools/runs/lm/explore.c): from the dump come the
// vocabulary, the means its mean-ablation uses (heads_means() on the
// measurement windows) and the preset sentences (the lesson's, as the
// parser links it and in full, and the first test windows). The page
// (page.html, with explorer.css, model.js and ui.js inlined) holds the
// weights as base64 of the .f16 files, which its own JavaScript decodes
// and runs (model.js): no file is fetched, no server is needed, nothing
// comes from the network.
//
// --run RUN_DIR: the run the networks are seed 1's networks of (its
// offsets.csv and relations.csv, lm-experiment's, as committed in
// tools/runs/lm/reference/long/): each head's measured role, shown beside
// its map: its offset profile (the mean weight at offsets 0 .. 8 and on
// the first token, the share of rows whose heaviest weight is there),
// whether it is positional by Voita's rule, and its best relation of the
// tag rules (heads_lm.h) with its score, the best fixed offset's and the
// margin.
//
// --plant no-scale writes the page with a planted error, the attention's
// scale 1/sqrt(d_head) dropped from the forward pass, which
// tools/checks/explorer.js must catch.
'use strict';
const fs = require('fs');
const path = require('path');

const PRESET_WINDOWS = 5; // test windows offered as sentences
const here = __dirname;

function usage(msg) {
  if (msg) console.error(`build.js: ${msg}`);
  console.error('usage: build.js --out OUT.html [--plant no-scale] --net WEIGHTS.f16 DUMP.json [--net ...]');
  process.exit(2);
}

const args = process.argv.slice(2);
let out = null, plant = null, run = null;
const nets = [];
for (let k = 0; k < args.length; k++) {
  if (args[k] === '--out') out = args[++k];
  else if (args[k] === '--plant') plant = args[++k];
  else if (args[k] === '--run') run = args[++k];
  else if (args[k] === '--net') nets.push({ weights: args[++k], dump: args[++k] });
  else usage(`unknown argument '${args[k]}'`);
}
if (!out || nets.length === 0 || nets.some((n) => !n.weights || !n.dump)) usage();
if (plant && plant !== 'no-scale') usage(`--plant knows no-scale only, not '${plant}'`);

let vocab = null, presets = null, size = null;
const data = { nets: [] };
for (const n of nets) {
  const d = JSON.parse(fs.readFileSync(n.dump, 'utf8'));
  if (d.format !== 'lm-explore-dump 1') usage(`${n.dump} is not an --explore-dump file`);
  const bytes = fs.readFileSync(n.weights);
  if (bytes.toString('latin1', 0, 8) !== 'LMPARAMM') usage(`${n.weights} is not a kept network (weights16.c)`);
  const heads = bytes.readUInt32LE(8 + 16), seed = bytes.readUInt32LE(8 + 28);
  if (heads !== d.n_heads || seed !== d.seed) {
    usage(`${n.dump} was written for ${d.n_heads} heads, seed ${d.seed}, not ${n.weights}'s ${heads}, ${seed}`);
  }
  if (!vocab) {
    vocab = d.vocab;
    size = d.size;
    presets = d.inputs.slice(0, 2 + PRESET_WINDOWS).map((x) => ({ name: x.name, ids: x.ids }));
  } else if (d.vocab.length !== vocab.length || d.vocab.some((w, i) => w !== vocab[i])) {
    usage(`${n.dump}'s vocabulary is not ${nets[0].dump}'s`);
  }
  data.nets.push({
    label: `${d.n_heads} head${d.n_heads > 1 ? 's' : ''}`, heads: d.n_heads, L: d.L, seed: d.seed,
    file: path.basename(n.weights), weights: bytes.toString('base64'), means: d.means.slice(6),
    meansWindows: d.means_windows,
  });
}
// A run's CSV file as rows of { column: text }
function csv(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
  const cols = lines[0].split(',');
  return lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}
// Each head's role in the run: the first L*h rows of its head count (the
// configurations with their own K/V heads come before the ones sharing)
if (run) {
  const off = csv(path.join(run, 'offsets.csv')), rel = csv(path.join(run, 'relations.csv'));
  const relations = [...new Set(rel.map((r) => r.relation))];
  for (const n of data.nets) {
    const H = n.L * n.heads;
    const rows = off.filter((r) => +r.heads === n.heads).slice(0, H);
    if (rows.length !== H) usage(`${run}/offsets.csv has ${rows.length} heads of a ${n.heads}-head network, not ${H}`);
    n.roles = rows.map((r, q) => {
      if (+r.block !== Math.floor(q / n.heads) || +r.head !== q % n.heads) usage(`${run}/offsets.csv: its heads are not in order`);
      const role = {
        mean: [...Array(9).keys()].map((k) => +r[`mean_w_${k}`]).concat([+r.mean_w_first]),
        top: [...Array(9).keys()].map((k) => +r[`top_${k}`]).concat([+r.top_first]),
        bestOffset: r.best_offset, bestShare: +r.best_share, positional: +r.positional,
        rel: null,
      };
      for (const name of relations) {
        const x = rel.filter((y) => y.relation === name && +y.heads === n.heads).slice(0, H)[q];
        if (x && (!role.rel || +x.margin > role.rel.margin)) {
          role.rel = { name, cases: +x.cases, score: +x.score, baseline: +x.baseline, k: +x.best_k, margin: +x.margin };
        }
      }
      return role;
    });
  }
  data.run = path.basename(path.resolve(run));
}
data.vocab = vocab;
data.presets = presets;
data.size = size;
data.planted = plant;

let model = fs.readFileSync(path.join(here, 'model.js'), 'utf8');
if (plant === 'no-scale') {
  const line = 'const scale = 1 / Math.sqrt(d);';
  if (!model.includes(line)) usage(`model.js has no line '${line}' to plant the error in`);
  model = model.replace(line, 'const scale = 1; // PLANTED: 1/sqrt(d_head) dropped');
}
model = model.replace(/\nif \(typeof module[^\n]*\n/, '\n');
const json = JSON.stringify(data).replace(/</g, '\\u003c');
const fill = {
  CSS: fs.readFileSync(path.join(here, 'explorer.css'), 'utf8'),
  MODEL: model,
  UI: fs.readFileSync(path.join(here, 'ui.js'), 'utf8'),
  DATA: json,
  TITLE: `The head explorer${plant ? ' (PLANTED ERROR: ' + plant + ')' : ''}`,
};
let page = fs.readFileSync(path.join(here, 'page.html'), 'utf8');
for (const k of Object.keys(fill)) if (!page.includes(`@${k}@`)) usage(`page.html has no @${k}@`);
page = page.replace(/@(CSS|MODEL|UI|DATA|TITLE)@/g, (m, k) => fill[k]);
fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
fs.writeFileSync(out + '.tmp', page);
fs.renameSync(out + '.tmp', out);
console.log(`  ${out}: ${data.nets.map((n) => n.label).join(' and ')} (size ${size}), ` +
  `${vocab.length} words, ${presets.length} preset sentences, ${(page.length / 1e6).toFixed(1)} MB` +
  `${plant ? ', PLANTED: ' + plant : ''}`);
