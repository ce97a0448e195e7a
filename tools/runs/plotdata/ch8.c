/*
 * plotdata/ch8.c: the numbers chapter 8 quotes about its model, counted
 * by the given code at the chapter's sizes (gpt_default_config()).
 *
 *   usage: ch8 OUTDIR
 *
 * Writes OUTDIR/ch8.values (key=value): the sizes (V, T, C, L, heads,
 * d_head, F = 4C), each parameter group's number of floats as
 * gpt_tensor_size() gives it, their sum P (which must equal what
 * gpt_init() lays out, or the program stops), the share of P the embedding holds, and the
 * multiply-adds per position of the readout (C V) against the blocks'
 * products (12 C^2 L). Needs no corpus and trains nothing.
 *
 * Dimension letters (see gpt.h): V = vocabulary, T = context,
 * C = d_model, L = blocks, h = heads, F = 4C, P = parameters.
 */
#include "datafile.h"
#include "gpt.h"

#include <stdio.h>

/* The floats of the tensors ks[0..n-1] at cfg's sizes. */
static long group(const struct gpt_config *cfg, const int *ks, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += gpt_tensor_size(cfg, ks[i]);
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ch8 OUTDIR\n");
        return 2;
    }
    const struct gpt_config c = gpt_default_config();
    const int attn[] = {GPT_W_Q, GPT_W_K, GPT_W_V, GPT_W_O};
    const int fc[] = {GPT_W_FC, GPT_B_FC}, proj[] = {GPT_W_PROJ, GPT_B_PROJ};
    const int ln[] = {GPT_LN1_G, GPT_LN1_B, GPT_LN2_G,
                      GPT_LN2_B, GPT_LNF_G, GPT_LNF_B};
    const int te[] = {GPT_WTE}, pe[] = {GPT_WPE};
    long P = 0;
    for (int k = 0; k < GPT_N_TENSORS; k++)
        P += gpt_tensor_size(&c, k);
    const long parts = group(&c, te, 1) + group(&c, pe, 1) +
                       group(&c, attn, 4) + group(&c, fc, 2) +
                       group(&c, proj, 2) + group(&c, ln, 6);
    struct gpt_model m;
    data_check("ch8", gpt_init(&m, &c, 1), "gpt_init at the chapter's sizes");
    const long laid_out = m.n_params;
    gpt_free(&m);
    if (parts != P || laid_out != P) {
        fprintf(stderr,
                "ch8: the groups count %ld floats, the tensors %ld, "
                "gpt_init() %ld\n",
                parts, P, laid_out);
        return 1;
    }
    FILE *v = data_open("ch8", argv[1], "ch8.values");
    fprintf(v, "ch8.V=%d\nch8.T=%d\nch8.C=%d\nch8.L=%d\nch8.heads=%d\n", c.V,
            c.T, c.C, c.L, c.n_heads);
    fprintf(v, "ch8.d_head=%d\nch8.F=%d\nch8.V_words=%d\n", c.C / c.n_heads,
            4 * c.C, c.V - 1);
    fprintf(v, "ch8.n_te=%ld\n", group(&c, te, 1));
    fprintf(v, "ch8.n_pe=%ld\n", group(&c, pe, 1));
    fprintf(v, "ch8.n_attn=%ld\n", group(&c, attn, 4));
    fprintf(v, "ch8.n_fc=%ld\n", group(&c, fc, 2));
    fprintf(v, "ch8.n_proj=%ld\n", group(&c, proj, 2));
    fprintf(v, "ch8.n_ln=%ld\n", group(&c, ln, 6));
    fprintf(v, "ch8.P=%ld\n", P);
    fprintf(v, "ch8.te_share_pct=%.0f\n",
            100.0 * (double)group(&c, te, 1) / (double)P);
    fprintf(v, "ch8.readout_madds=%ld\n", (long)c.C * c.V);
    fprintf(v, "ch8.blocks_madds=%ld\n", 12L * c.C * c.C * c.L);
    data_close("ch8", v);
    return 0;
}
