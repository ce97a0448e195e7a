/*
 * kit.h: what every chapter of the kit shares.
 *
 * Every kit function that can fail returns an int status: KIT_OK (0) on
 * success, or one of the negative codes below. A function that returns an
 * error writes nothing to its outputs. kit_strerror() turns a code into a
 * sentence a student can read.
 *
 * Arrays are flat, row-major and allocated by the caller. A matrix X of
 * shape (R, C) stores X[r][c] at X[r * C + c].
 *
 * Sizes are ints. The kit is for small, readable examples: the product
 * of any two sizes (T * T, m * p, d_model * d_model, ...) must stay below
 * INT_MAX, and index arithmetic is done in int on that understanding.
 */
#ifndef KIT_H
#define KIT_H

enum kit_status {
    KIT_OK = 0,
    KIT_E_SIZE = -1,  /* a size is zero, negative or out of range    */
    KIT_E_NULL = -2,  /* a required pointer is NULL                  */
    KIT_E_HEADS = -3, /* d_model is not a multiple of n_heads, etc.  */
    KIT_E_NOMEM = -4, /* out of memory for scratch space             */
    KIT_E_INPUT = -5, /* a file is missing or malformed (chapter 8)  */
    KIT_E_TODO = -99, /* a starter stub: the exercise is not written */
};

/* A short English sentence for a status code. Never returns NULL. */
const char *kit_strerror(int status);

/* The code's name, "KIT_E_SIZE" for KIT_E_SIZE. Never returns NULL. */
const char *kit_status_name(int status);

#endif
