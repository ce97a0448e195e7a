/*
 * kit.c: status codes as sentences (declared in kit.h). Given code.
 */
#include "kit.h"

const char *kit_strerror(int status)
{
    switch (status) {
    case KIT_OK: return "success";
    case KIT_E_SIZE: return "a size is zero or negative";
    case KIT_E_NULL: return "a required pointer is NULL";
    case KIT_E_HEADS:
        return "impossible head count: n_heads must divide d_model";
    case KIT_E_NOMEM: return "out of memory";
    case KIT_E_FORMAT: return "the file is malformed";
    case KIT_E_TODO: return "not written yet (a starter stub)";
    default: return "unknown status code";
    }
}
