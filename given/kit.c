/*
 * kit.c: status codes as sentences and names, and the parameter probe
 * of the finite-difference tests (kit.h). Given code.
 */
#include "kit.h"
#include "test_hooks.h" /* what the tests call beside the API */

const char *kit_strerror(int status)
{
    switch (status) {
    case KIT_OK: return "success";
    case KIT_E_SIZE:
        return "a size is zero, negative or out of range (a full KV cache, "
               "a total too large to hold)";
    case KIT_E_NULL: return "a required pointer is NULL";
    case KIT_E_HEADS:
        return "impossible heads: n_heads must divide d_model, and a head "
               "index must be 0 .. n_heads - 1";
    case KIT_E_NOMEM: return "out of memory";
    case KIT_E_INPUT:
        return "bad input: a file is missing or malformed (the message "
               "names the file and line)";
    case KIT_E_TODO: return "not written yet (a starter stub)";
    default: return "unknown status code";
    }
}

const char *kit_status_name(int status)
{
    switch (status) {
    case KIT_OK: return "KIT_OK";
    case KIT_E_SIZE: return "KIT_E_SIZE";
    case KIT_E_NULL: return "KIT_E_NULL";
    case KIT_E_HEADS: return "KIT_E_HEADS";
    case KIT_E_NOMEM: return "KIT_E_NOMEM";
    case KIT_E_INPUT: return "KIT_E_INPUT";
    case KIT_E_TODO: return "KIT_E_TODO";
    default: return "an unknown status";
    }
}

int kit_param_probe(float *params, int P, int n, const int *index,
                    const float *value, int (*pass)(void *ctx, int j),
                    void *ctx)
{
    if (!params || !index || !value || !pass)
        return KIT_E_NULL;
    for (int j = 0; j < n; j++)
        if (index[j] < 0 || index[j] >= P)
            return KIT_E_SIZE;
    int status = KIT_OK;
    for (int j = 0; j < n; j++) {
        const float keep = params[index[j]];
        params[index[j]] = value[j];
        const int rc = pass(ctx, j);
        if (status == KIT_OK)
            status = rc;
        params[index[j]] = keep;
    }
    return status;
}
