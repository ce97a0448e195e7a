/*
 * plotdata/ch4.c: measure how well finite differences check a gradient,
 * for chapter 4.
 *
 *   usage: ch4 OUTDIR
 *
 * One head of attention, T = 4, d_k = 4, d_v = 3, random inputs, loss
 * L = sum(out * G). The reference gradient d_Q is the analytic one,
 * computed in double precision by the chain rule of chapter 4
 * (grad_double below), so that no finite difference is its own judge.
 * Against it we measure
 *   - the kit's float attention_backward();
 *   - central differences (L(q + h) - L(q - h)) / 2h of the same forward
 *     pass in double, for many h, including the tests' h = 1e-5;
 *   - central differences of the kit's float attention(), for many h.
 *
 * Writes into OUTDIR:
 *   ch4_fd.dat    h, then the largest error in d_Q of the double and
 *                 of the float differences (nan when h is below float
 *                 resolution), and of attention_backward() (constant)
 *   ch4.values    key=value numbers quoted in chapter 4, such as the
 *                 largest error of attention_backward() (backward_err)
 *
 * Dimension letters: T = tokens, d_k = query/key width, d_v = value width.
 */
#include "attention.h"
#include "datafile.h"
#include "grad.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { T = 4, DK = 4, DV = 3 };

/* L = sum(attention(Q, K, V) * G) in double.
 * Q, K (T, d_k), V, G (T, d_v). */
static double loss_double(const double *Q, const double *K, const double *V,
                          const double *G)
{
    double P[T * T], L = 0;
    for (int i = 0; i < T; i++) {
        double max = -INFINITY, sum = 0;
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int c = 0; c < DK; c++)
                s += Q[i * DK + c] * K[j * DK + c];
            P[i * T + j] = s / sqrt(DK);
            max = P[i * T + j] > max ? P[i * T + j] : max;
        }
        for (int j = 0; j < T; j++)
            sum += (P[i * T + j] = exp(P[i * T + j] - max));
        for (int j = 0; j < T; j++)
            P[i * T + j] /= sum;
        for (int c = 0; c < DV; c++) {
            double o = 0;
            for (int j = 0; j < T; j++)
                o += P[i * T + j] * V[j * DV + c];
            L += o * G[i * DV + c];
        }
    }
    return L;
}

/* d_Q of L = sum(attention(Q, K, V) * G), analytically, in double:
 * out = P V, so d_P = G V^T; the softmax rule gives
 * d_S'[i][j] = P[i][j] (d_P[i][j] - sum_j' P[i][j'] d_P[i][j']);
 * S' = S / sqrt(d_k) and S = Q K^T give d_Q = (d_S' / sqrt(d_k)) K.
 * Q, K (T, d_k), V, G (T, d_v), d_Q (T, d_k). */
static void grad_double(const double *Q, const double *K, const double *V,
                        const double *G, double *d_Q)
{
    for (int i = 0; i < T; i++) {
        double P[T], dP[T], max = -INFINITY, sum = 0, dot = 0;
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int c = 0; c < DK; c++)
                s += Q[i * DK + c] * K[j * DK + c];
            P[j] = s / sqrt(DK);
            max = P[j] > max ? P[j] : max;
        }
        for (int j = 0; j < T; j++)
            sum += (P[j] = exp(P[j] - max));
        for (int j = 0; j < T; j++) {
            P[j] /= sum;
            dP[j] = 0;
            for (int c = 0; c < DV; c++)
                dP[j] += G[i * DV + c] * V[j * DV + c];
            dot += P[j] * dP[j];
        }
        for (int c = 0; c < DK; c++) {
            double g = 0;
            for (int j = 0; j < T; j++)
                g += P[j] * (dP[j] - dot) / sqrt(DK) * K[j * DK + c];
            d_Q[i * DK + c] = g;
        }
    }
}

/* The same loss through the kit's float attention(). */
static float loss_float(const float *Q, const float *K, const float *V,
                        const float *G)
{
    float out[T * DV], w[T * T], L = 0.0f;
    data_check("ch4", attention(Q, K, V, out, w, T, DK, DV), "attention");
    for (int i = 0; i < T * DV; i++)
        L += out[i] * G[i];
    return L;
}

/* d_Q by central differences of the double loss, step h. */
static void fd_double(double *Q, const double *K, const double *V,
                      const double *G, double h, double *d_Q)
{
    for (int k = 0; k < T * DK; k++) {
        double q = Q[k];
        Q[k] = q + h;
        double up = loss_double(Q, K, V, G);
        Q[k] = q - h;
        double down = loss_double(Q, K, V, G);
        Q[k] = q;
        d_Q[k] = (up - down) / (2 * h);
    }
}

/* d_Q by central differences of the float loss, step h. Returns 0 when
 * h is so small that some q + h rounds back to q in float. */
static int fd_float(float *Q, const float *K, const float *V, const float *G,
                    float h, double *d_Q)
{
    for (int k = 0; k < T * DK; k++) {
        float q = Q[k];
        Q[k] = q + h;
        float up = loss_float(Q, K, V, G);
        Q[k] = q - h;
        float down = loss_float(Q, K, V, G);
        Q[k] = q;
        /* the step the float input really moved by */
        double step = (double)(q + h) - (double)(q - h);
        if (step == 0)
            return 0;
        d_Q[k] = ((double)up - down) / step;
    }
    return 1;
}

/* x as "1.1e-11" or "2e-5": short, and plain ASCII for LaTeX. */
static void put_sci(FILE *f, const char *key, double x, int digits)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.*e", digits, x);
    char *e = buf;
    while (*e && *e != 'e')
        e++;
    int expo = atoi(e + 1);
    *e = '\0';
    fprintf(f, "%s=%se%d\n", key, buf, expo);
}

static double max_err(const double *a, const double *b, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ch4 OUTDIR\n");
        return 2;
    }
    struct rng r;
    rng_seed(&r, 4004);
    float Qf[T * DK], Kf[T * DK], Vf[T * DV], Gf[T * DV], Pf[T * T];
    float out[T * DV], d_Qf[T * DK] = {0}, d_Kf[T * DK] = {0};
    float d_Vf[T * DV] = {0};
    rng_fill(&r, Qf, T * DK, -2, 2);
    rng_fill(&r, Kf, T * DK, -2, 2);
    rng_fill(&r, Vf, T * DV, -1, 1);
    rng_fill(&r, Gf, T * DV, -1, 1);
    double Q[T * DK], K[T * DK], V[T * DV], G[T * DV];
    for (int i = 0; i < T * DK; i++)
        Q[i] = Qf[i], K[i] = Kf[i];
    for (int i = 0; i < T * DV; i++)
        V[i] = Vf[i], G[i] = Gf[i];

    /* the reference: the analytic gradient in double */
    const double h_test = 1e-5; /* the step tests/test_ch4.c uses */
    double ref[T * DK], fd[T * DK], kit[T * DK];
    grad_double(Q, K, V, G, ref);

    /* the kit's backward pass */
    data_check("ch4", attention(Qf, Kf, Vf, out, Pf, T, DK, DV), "attention");
    data_check(
        "ch4",
        attention_backward(Qf, Kf, Vf, Pf, Gf, d_Qf, d_Kf, d_Vf, T, DK, DV, 0),
        "attention_backward");
    for (int i = 0; i < T * DK; i++)
        kit[i] = d_Qf[i];
    double err_kit = max_err(kit, ref, T * DK);

    FILE *dat = data_open("ch4", argv[1], "ch4_fd.dat");
    fprintf(dat, "# h  double_fd_err  float_fd_err  backward_err\n");
    double at_test_h = NAN, d_at_test_h = NAN;
    double best_f = INFINITY, best_f_h = 0, best_d = INFINITY, best_d_h = 0;
    for (int e = 2; e <= 40; e++) {
        double h = pow(10.0, -e / 4.0);
        fd_double(Q, K, V, G, h, fd);
        double ed = max_err(fd, ref, T * DK);
        int ok = fd_float(Qf, Kf, Vf, Gf, (float)h, fd);
        double ef = ok ? max_err(fd, ref, T * DK) : NAN;
        if (fabs(h - h_test) < 1e-12 * h_test)
            at_test_h = ef, d_at_test_h = ed;
        fprintf(dat, "%.6g %.6g %.6g %.6g\n", h, ed, ef, err_kit);
        if (ef < best_f)
            best_f = ef, best_f_h = h;
        if (ed < best_d)
            best_d = ed, best_d_h = h;
    }
    data_close("ch4", dat);

    FILE *v = data_open("ch4", argv[1], "ch4.values");
    put_sci(v, "ch4.fd_h", h_test, 0);
    put_sci(v, "ch4.backward_err", err_kit, 1);
    put_sci(v, "ch4.double_fd_best_err", best_d, 1);
    put_sci(v, "ch4.double_fd_best_h", best_d_h, 0);
    put_sci(v, "ch4.float_fd_best_err", best_f, 1);
    put_sci(v, "ch4.float_fd_best_h", best_f_h, 0);
    put_sci(v, "ch4.float_fd_err_at_test_h", at_test_h, 1);
    put_sci(v, "ch4.double_fd_err_at_test_h", d_at_test_h, 1);
    data_close("ch4", v);
    return 0;
}
