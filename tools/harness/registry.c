/*
 * registry.c: the registry (exercises.def) checked against the headers,
 * for tools/checks/30-api.sh. It compiles only if every KIT_EXERCISE
 * line's arguments are its function's signature in include/ and no two
 * lines share a request number; it prints one line per exercise, "chapter name kind",
 * which 30-api.sh compares with the functions starter/ch*.c define.
 */
#include "kit.h"
#define KIT_LEAKCHECK_NO_MACROS
#include "leakcheck.h"
#include "registry.h"
#include "worker_proto.h"

#include "attention.h"
#include "decode.h"
#include "experiment.h"
#include "fast.h"
#include "gpt.h"
#include "grad.h"
#include "heads_lm.h"
#include "mha.h"

#include <stdio.h>

/* Each exercise's signature, from its arguments, is its declaration's. */
#define KIT_EXERCISE(number, chapter, name, kind, ...)                         \
    _Static_assert(_Generic(&name,                                             \
                            int (*)(KIT_LIST(KIT_PARAM, __VA_ARGS__)) : 1,     \
                            default : 0),                                      \
                   "exercises.def: the arguments of " #name                    \
                   " are not its signature in include/");
#define KIT_REQUEST(number, chapter, name)
#include "exercises.def"
#undef KIT_EXERCISE
#undef KIT_REQUEST

/* No two requests share a number (a duplicate case does not compile). */
static int request_known(int fn)
{
    switch (fn) {
#define KIT_EXERCISE(number, chapter, name, ...) case number:
#define KIT_REQUEST(number, chapter, name)       case number:
#include "exercises.def"
#undef KIT_EXERCISE
#undef KIT_REQUEST
        return 1;
    default: return 0;
    }
}

int main(void)
{
    int bad = 0;
#define KIT_EXERCISE(number, chapter, name, kind, ...)                         \
    printf("%d %s %s\n", chapter, #name, #kind);                               \
    bad |= !request_known(W_##name);
#define KIT_REQUEST(number, chapter, name) bad |= !request_known(W_##name);
#include "exercises.def"
#undef KIT_EXERCISE
#undef KIT_REQUEST
    return bad;
}
