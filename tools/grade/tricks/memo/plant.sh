#!/bin/sh
# The trick "memo" of 75-grade: every published answer a test checks a
# student function against (the golden cases of tests/golden/ and chapter
# 1's worked example) pasted into the submission, and returned whenever
# the inputs are the published ones; any other input runs the file's own
# code. plant.sh KIT SUBMISSION: plants it into the chN_*.c files found
# under SUBMISSION (flat or in starter/), each file's golden header and
# replays (this folder) at its top and one line at the start of each
# function's body.
set -eu
kit=$1 sub=$2 here=$(dirname "$0")
# file, the golden headers it needs, the function, the line planted
while IFS='|' read -r file golden fn line; do
    f=$(find "$sub" -name "$file" | head -n 1)
    [ -n "$f" ] || { echo "plant.sh: no $file in $sub" >&2; exit 1; }
    n=${file#ch} n=${n%%_*}
    if ! grep -q 'memo_same' "$f"; then
        for k in $golden; do
            sed -e '/^#/d' -e "s/ch${k}_/m${n}ch${k}_/g" -e "s/CH${k}_/M${n}CH${k}_/g" \
                -e 's/^static const/const/' "$kit/tests/golden/ch${k}_golden.h"
        done >"$f.new"
        cat "$here/common.c" "$here/$file" "$f" >>"$f.new"
        mv "$f.new" "$f"
    fi
    sed -i "/^int $fn(/,/^{\$/ s|^{\$|{\n    $line|" "$f"
    grep -qF "$line" "$f" || { echo "plant.sh: $fn not found in $f" >&2; exit 1; }
done <<'TABLE'
ch1_attention.c|1|matmul|if (memo_matmul(A, B, C, m, n, p, 0)) return KIT_OK;
ch1_attention.c|1|matmul_bt|if (memo_matmul(A, B, C, m, n, p, 1)) return KIT_OK;
ch1_attention.c|1|softmax_rows|if (memo_softmax(X, rows, cols)) return KIT_OK;
ch1_attention.c|1|attention|if (memo_attention(Q, K, V, out, weights, T, d_k, d_v)) return KIT_OK;
ch2_causal.c|2|causal_attention|if (memo_causal(Q, K, V, out, weights, T, d_k, d_v)) return KIT_OK;
ch3_mha.c|3|mha_forward|if (memo_mha(cfg, w, X, out, weights, T)) return KIT_OK;
ch3_mha.c|3|mha_forward_fused|if (memo_mha(cfg, w, X, out, weights, T)) return KIT_OK;
ch4_grad.c|4|matmul_backward|if (memo_matmul_backward(A, B, d_C, d_A, d_B, m, n, p)) return KIT_OK;
ch4_grad.c|4|softmax_rows_backward|if (memo_softmax_backward(Y, d_Y, d_X, rows, cols)) return KIT_OK;
ch4_grad.c|4|attention_backward|if (memo_att_backward(Q, K, V, d_out, d_Q, d_K, d_V, T, d_k, d_v, causal)) return KIT_OK;
ch4_grad.c|4|mha_backward|if (memo_mha_backward(cfg, w, X, d_out, d_X, d_w, T)) return KIT_OK;
ch6_decode.c|6|gqa_forward|if (memo_gqa(cfg, w, X, out, weights, T)) return KIT_OK;
ch6_decode.c|6|gqa_decode_step|if (memo_decode(cfg, w, c, x, out)) return memo_rc;
ch7_fast.c|3 1|softmax_online|if (memo_online(X, rows, cols)) return KIT_OK;
ch7_fast.c|3 1|mha_forward_flash|if (memo_flash(cfg, w, X, out, T)) return KIT_OK;
ch8_lm.c|8|layernorm_forward|if (memo_ln(x, g, b, y, mean, rstd, N, C)) return KIT_OK;
ch8_lm.c|8|layernorm_backward|if (memo_ln_backward(x, g, d_y, d_x, d_g, d_b, N, C)) return KIT_OK;
TABLE
