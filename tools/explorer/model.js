// model.js: chapter 8's GPT, forward only, in plain JavaScript, for the
// head explorer (tools/explorer/build.js inlines it into the page).
//
// Written from the book's equations (chapter 8, "The model", "LayerNorm"
// and "What a head is worth"), not from a port of given/gpt.c:
//   X_0    = W_te[x] + W_pe                                  (S, C)
//   for each block l = 0 .. L-1:
//     X   += MultiHead_l(LN_1,l(X))     causal, no biases, h heads of
//                                       d_head = C / h: head i reads
//                                       columns i d_head .. of X W_q,
//                                       X W_k, X W_v; its weights are
//                                       softmax over j <= t of
//                                       q_t . k_j / sqrt(d_head), its
//                                       output sum_j A_tj v_j; the
//                                       heads' outputs side by side
//                                       (concat) times W_o
//     X   += GELU(LN_2,l(X) W_fc + b_fc) W_proj + b_proj
//   logits_t,v = LN_f(X)_t . W_te[v]                          tied readout
// LayerNorm of a row x of C numbers: mu = mean(x), r = 1 / sqrt(mean((x -
// mu)^2) + 1e-5), y_c = g_c (x_c - mu) r + b_c. GELU(z) = z/2 (1 +
// tanh(sqrt(2/pi) (z + 0.044715 z^3))). Mean-ablation of block l's head i
// (chapter 8): its block of concat becomes, at every position, the mean
// of its output over the measurement windows (the means the C code
// computed, heads_means(), embedded in the page), before W_o.
//
// The weights are the kit's 16-bit files (tools/runs/lm/weights16.c):
// "LMPARAMM", 10 little-endian uint32 (V T C L n_heads kv_heads n_params
// seed, the rate's float32 bits, n_half), then the first n_half
// parameters (W_te and W_pe) as IEEE binary16 and the rest as float32,
// little-endian, in the order of include/gpt.h's enum gpt_tensor.
// binary16 is decoded here from its definition: 1 sign bit, 5 exponent
// bits (bias 15), 10 fraction bits; exponent 0 is zero or a subnormal,
// fraction x 2^-24.
//
// Arithmetic: float32 arrays, with sums carried in JavaScript's doubles,
// so the page agrees with the C code (float32 throughout) to its
// rounding, about 1e-6 of a value.
'use strict';

const ExplorerModel = (function () {
  const LN_EPS = 1e-5;
  const GELU_K = Math.sqrt(2 / Math.PI), GELU_A = 0.044715;
  const HEAD_BYTES = 8 + 4 * 10;
  // enum gpt_tensor's order, each tensor's size from the sizes
  const TENSORS = [
    ['wte', (z) => z.V * z.C], ['wpe', (z) => z.T * z.C],
    ['ln1g', (z) => z.L * z.C], ['ln1b', (z) => z.L * z.C],
    ['wq', (z) => z.L * z.C * z.C], ['wk', (z) => z.L * z.C * z.C],
    ['wv', (z) => z.L * z.C * z.C], ['wo', (z) => z.L * z.C * z.C],
    ['ln2g', (z) => z.L * z.C], ['ln2b', (z) => z.L * z.C],
    ['wfc', (z) => z.L * z.C * 4 * z.C], ['bfc', (z) => z.L * 4 * z.C],
    ['wproj', (z) => z.L * 4 * z.C * z.C], ['bproj', (z) => z.L * z.C],
    ['lnfg', (z) => z.C], ['lnfb', (z) => z.C],
  ];

  let f16 = null; // every binary16 value as a float, by its bits
  function f16Table() {
    if (f16) return f16;
    f16 = new Float32Array(65536);
    for (let b = 0; b < 65536; b++) {
      const sign = b & 0x8000 ? -1 : 1, e = (b >> 10) & 31, frac = b & 1023;
      if (e === 0) f16[b] = sign * frac * 2 ** -24;
      else if (e === 31) f16[b] = frac ? NaN : sign * Infinity;
      else f16[b] = sign * (1 + frac / 1024) * 2 ** (e - 15);
    }
    return f16;
  }

  // A network from the bytes of its .f16 file: its sizes and a view of
  // each tensor into one Float32Array.
  function parseWeights(bytes) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const magic = String.fromCharCode(...bytes.subarray(0, 8));
    if (magic !== 'LMPARAMM') throw new Error(`not a kept network (it begins "${magic}")`);
    const u = (k) => dv.getUint32(8 + 4 * k, true);
    const z = { V: u(0), T: u(1), C: u(2), L: u(3), nHeads: u(4), kvHeads: u(5),
      nParams: u(6), seed: u(7), lr: dv.getFloat32(8 + 4 * 8, true), nHalf: u(9) };
    if (z.nHalf !== 0 && z.nHalf !== z.V * z.C + z.T * z.C) throw new Error('n_half is neither 0 nor the embeddings\' size');
    if (bytes.byteLength !== HEAD_BYTES + 2 * z.nHalf + 4 * (z.nParams - z.nHalf)) {
      throw new Error(`${bytes.byteLength} bytes, not the header's`);
    }
    const table = f16Table(), p = new Float32Array(z.nParams);
    let at = HEAD_BYTES;
    for (let k = 0; k < z.nHalf; k++, at += 2) p[k] = table[dv.getUint16(at, true)];
    for (let k = z.nHalf; k < z.nParams; k++, at += 4) p[k] = dv.getFloat32(at, true);
    z.t = {};
    let off = 0;
    for (const [name, size] of TENSORS) {
      const n = size(z);
      z.t[name] = p.subarray(off, off + n);
      off += n;
    }
    if (off !== z.nParams) throw new Error(`the tensors hold ${off} parameters, the header says ${z.nParams}`);
    z.dHead = z.C / z.nHeads;
    return z;
  }

  // y (N, C) = LayerNorm of each row of x (N, C), gain g and bias b (C)
  function layerNorm(x, g, b, y, N, C) {
    for (let n = 0; n < N; n++) {
      const o = n * C;
      let mu = 0;
      for (let c = 0; c < C; c++) mu += x[o + c];
      mu /= C;
      let v = 0;
      for (let c = 0; c < C; c++) v += (x[o + c] - mu) * (x[o + c] - mu);
      const r = 1 / Math.sqrt(v / C + LN_EPS);
      for (let c = 0; c < C; c++) y[o + c] = g[c] * ((x[o + c] - mu) * r) + b[c];
    }
  }

  // out (N, M) = x (N, K) W (K, M) [+ bias (M)]
  function matmul(x, W, bias, out, N, K, M) {
    const row = new Float64Array(M);
    for (let n = 0; n < N; n++) {
      if (bias) for (let m = 0; m < M; m++) row[m] = bias[m];
      else row.fill(0);
      for (let k = 0; k < K; k++) {
        const a = x[n * K + k], w = k * M;
        if (a === 0) continue;
        for (let m = 0; m < M; m++) row[m] += a * W[w + m];
      }
      for (let m = 0; m < M; m++) out[n * M + m] = row[m];
    }
  }

  // One head's causal attention: weights A (S, S) (zero above the
  // diagonal) and its output into concat's columns i d .. (i+1) d - 1.
  function attendHead(Q, K, Vv, i, d, C, S, A, concat) {
    const scale = 1 / Math.sqrt(d);
    const s = new Float64Array(S);
    for (let t = 0; t < S; t++) {
      let mx = -Infinity;
      for (let j = 0; j <= t; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += Q[t * C + i * d + c] * K[j * C + i * d + c];
        s[j] = dot * scale;
        if (s[j] > mx) mx = s[j];
      }
      let sum = 0;
      for (let j = 0; j <= t; j++) { s[j] = Math.exp(s[j] - mx); sum += s[j]; }
      for (let j = 0; j < S; j++) A[t * S + j] = j <= t ? s[j] / sum : 0;
      for (let c = 0; c < d; c++) {
        let o = 0;
        for (let j = 0; j <= t; j++) o += (s[j] / sum) * Vv[j * C + i * d + c];
        concat[t * C + i * d + c] = o;
      }
    }
  }

  // logits (N, V): row t, token v = x_t . wte[v], x (N, C). Four rows at
  // a time, so that each number of wte, read once, serves four dot
  // products: the readout is most of the pass's work (V C per position).
  function readout(x, wte, logits, N, V, C) {
    let t = 0;
    for (; t + 4 <= N; t += 4) {
      const o0 = t * C, o1 = o0 + C, o2 = o1 + C, o3 = o2 + C;
      for (let v = 0; v < V; v++) {
        let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const e = v * C;
        for (let c = 0; c < C; c++) {
          const wv = wte[e + c];
          a0 += x[o0 + c] * wv; a1 += x[o1 + c] * wv;
          a2 += x[o2 + c] * wv; a3 += x[o3 + c] * wv;
        }
        const q = t * V + v;
        logits[q] = a0; logits[q + V] = a1; logits[q + 2 * V] = a2; logits[q + 3 * V] = a3;
      }
    }
    for (; t < N; t++) {
      const o = t * C;
      for (let v = 0; v < V; v++) {
        let a = 0;
        const e = v * C;
        for (let c = 0; c < C; c++) a += x[o + c] * wte[e + c];
        logits[t * V + v] = a;
      }
    }
  }

  // The forward pass of net on ids (S tokens, S <= T). opts:
  //   ablate   heads mean-ablated, each l * n_heads + i (default none)
  //   means    (L, h, d_head) Float32Array, needed when ablating
  //   logits   'all' (default): (S, V); a position t: that row only (V);
  //            'none'
  // Returns { weights: (L*h, S, S) Float32Array, block l's head i at
  // (l*h + i)*S*S, logits }.
  function forward(net, ids, opts = {}) {
    const { V, T, C, L, nHeads: h, dHead: d, t: w } = net;
    const S = ids.length, F = 4 * C;
    if (S < 1 || S > T) throw new Error(`${S} tokens: the context holds 1 to ${T}`);
    const ablate = new Set(opts.ablate || []);
    if (ablate.size && !opts.means) throw new Error('ablation needs the means');
    const X = new Float32Array(S * C), ln = new Float32Array(S * C);
    const Q = new Float32Array(S * C), K = new Float32Array(S * C), Vv = new Float32Array(S * C);
    const concat = new Float32Array(S * C), out = new Float32Array(S * C);
    const fc = new Float32Array(S * F);
    const weights = new Float32Array(L * h * S * S);
    for (let t = 0; t < S; t++) {
      const id = ids[t];
      if (!(id >= 0 && id < V)) throw new Error(`token ${id} is not in 0 .. ${V - 1}`);
      for (let c = 0; c < C; c++) X[t * C + c] = w.wte[id * C + c] + w.wpe[t * C + c];
    }
    const CC = C * C;
    for (let l = 0; l < L; l++) {
      layerNorm(X, w.ln1g.subarray(l * C), w.ln1b.subarray(l * C), ln, S, C);
      matmul(ln, w.wq.subarray(l * CC), null, Q, S, C, C);
      matmul(ln, w.wk.subarray(l * CC), null, K, S, C, C);
      matmul(ln, w.wv.subarray(l * CC), null, Vv, S, C, C);
      for (let i = 0; i < h; i++) {
        const A = weights.subarray((l * h + i) * S * S, (l * h + i + 1) * S * S);
        attendHead(Q, K, Vv, i, d, C, S, A, concat);
        if (ablate.has(l * h + i)) {
          const mean = opts.means.subarray((l * h + i) * d, (l * h + i + 1) * d);
          for (let t = 0; t < S; t++) for (let c = 0; c < d; c++) concat[t * C + i * d + c] = mean[c];
        }
      }
      matmul(concat, w.wo.subarray(l * CC), null, out, S, C, C);
      for (let k = 0; k < S * C; k++) X[k] += out[k];
      layerNorm(X, w.ln2g.subarray(l * C), w.ln2b.subarray(l * C), ln, S, C);
      matmul(ln, w.wfc.subarray(l * C * F), w.bfc.subarray(l * F), fc, S, C, F);
      for (let k = 0; k < S * F; k++) {
        const z = fc[k];
        fc[k] = 0.5 * z * (1 + Math.tanh(GELU_K * (z + GELU_A * z * z * z)));
      }
      matmul(fc, w.wproj.subarray(l * F * C), w.bproj.subarray(l * C), out, S, F, C);
      for (let k = 0; k < S * C; k++) X[k] += out[k];
    }
    layerNorm(X, w.lnfg, w.lnfb, ln, S, C);
    const which = opts.logits === undefined ? 'all' : opts.logits;
    let logits = null;
    if (which !== 'none') {
      const t0 = which === 'all' ? 0 : which, t1 = which === 'all' ? S : which + 1;
      logits = new Float32Array((t1 - t0) * V);
      readout(new Float64Array(ln.subarray(t0 * C, t1 * C)), w.wte, logits, t1 - t0, V, C);
    }
    return { weights, logits };
  }

  // The mean, over positions 0 .. S-2, of -log softmax(logits_t)[ids[t+1]]
  // (logits (S, V)): the sentence's loss, each word predicted from those
  // before it. NaN for a single token.
  function loss(logits, ids, V) {
    const S = ids.length;
    let sum = 0;
    for (let t = 0; t + 1 < S; t++) sum += -logSoftmaxAt(logits, t, V, ids[t + 1]);
    return S > 1 ? sum / (S - 1) : NaN;
  }

  // row t of logits: its largest value and sum of exp(logit - largest)
  function rowMaxSum(logits, t, V) {
    const o = t * V;
    let mx = -Infinity;
    for (let k = 0; k < V; k++) if (logits[o + k] > mx) mx = logits[o + k];
    let z = 0;
    for (let k = 0; k < V; k++) z += Math.exp(logits[o + k] - mx);
    return { mx, z };
  }

  // log softmax(logits row t)[v]
  function logSoftmaxAt(logits, t, V, v) {
    const { mx, z } = rowMaxSum(logits, t, V);
    return logits[t * V + v] - mx - Math.log(z);
  }

  // The n most probable next tokens after position t: [{ id, p }]
  function top(logits, t, V, n) {
    const o = t * V;
    const { mx, z } = rowMaxSum(logits, t, V);
    const best = [];
    for (let k = 0; k < V; k++) {
      const x = logits[o + k];
      if (best.length < n || x > best[best.length - 1].x) {
        best.push({ id: k, x });
        best.sort((a, b) => b.x - a.x || a.id - b.id);
        if (best.length > n) best.pop();
      }
    }
    return best.map((b) => ({ id: b.id, p: Math.exp(b.x - mx) / z }));
  }

  // Text into vocabulary ids as the kit's corpus_encode() splits it: at
  // whitespace, each of . , ; : ! ? ( ) " a token of its own, ASCII
  // letters lowercased; a word not in the vocabulary is <unk> (id 0).
  // Returns [{ text, id }].
  function encode(text, index) {
    const punct = '.,;:!?()"', out = [];
    const re = /\s/;
    for (let p = 0; p < text.length;) {
      if (re.test(text[p])) { p++; continue; }
      let len = 1;
      if (!punct.includes(text[p])) {
        while (p + len < text.length && !re.test(text[p + len]) && !punct.includes(text[p + len])) len++;
      }
      const word = text.slice(p, p + len);
      const key = word.replace(/[A-Z]/g, (c) => c.toLowerCase());
      out.push({ text: word, id: index.has(key) ? index.get(key) : 0 });
      p += len;
    }
    return out;
  }

  return { parseWeights, forward, loss, logSoftmaxAt, top, encode };
})();

if (typeof module !== 'undefined') module.exports = ExplorerModel;
