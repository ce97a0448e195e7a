# gen.awk: plant every classic mistake of a family in one solution file.
#
#   awk -v funcs='^(matmul|softmax_rows)$' -v rules=RULES -v out=DIR \
#       -f gen.awk solutions/ch1_attention.c
#
# Walks each function whose name matches funcs and writes one mutated
# copy of the whole file per mistake, as DIR/ID.c, and one manifest line
# per copy on stdout:  ID <TAB> family <TAB> the line before <TAB> after.
# ID is function.family.what: stable while the solution's lines keep
# their form, whatever their line numbers. A copy identical to an
# earlier one is not written twice.
#
# The families walked on every line, by the code's shape alone:
#   bound  each `for (int v = S; v < E; v++)`: `<=` (one past the end),
#          `< E - 1` (one short), and the start one late (S + 1, when S
#          is not 1, which max-style loops start at on purpose)
#   init   each `float x = 0.0f;` accumulator starts at 1
#   skip   each step (a call, or an assignment that is not a declaration)
#          left out
#   dup    each step done twice
#   order  each top-level call moved after the next top-level call
# and by anchors (RULES, a tab-separated file: function regex, family,
# what, the literal text to find, the literal text to put instead; the
# first occurrence on each line of that function is replaced):
#   operands, transposed indices, scales, strides, head routing, signs.
# The argument checks at a function's top are left alone: the walk
# starts at its first top-level `for` or step, where the computation
# starts. Only the rules of family `check` (a contract's test written
# wrong: `T > c->capacity` for `T > c->capacity - c->len`) reach them.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }

# Literal replacement of the first `from` in s (no regex metacharacters).
function lsub(s, from, to,    k) {
    k = index(s, from)
    if (k == 0) return s
    return substr(s, 1, k - 1) to substr(s, k + length(from))
}

# Write the file with line a replaced by ta (and line b by tb, if b).
function emit(id, fam, before, after, a, ta, b, tb,    n, text, path) {
    text = ""
    for (n = 1; n <= N; n++) {
        if (n == a) text = text ta "\n"
        else if (b && n == b) text = text tb "\n"
        else text = text L[n] "\n"
    }
    if (text in seen) return
    seen[text] = 1
    if (id in ids) id = id "." (++ids[id])
    else ids[id] = 1
    path = out "/" id ".c"
    printf "%s", text > path
    close(path)
    gsub(/\t/, " ", before); gsub(/\t/, " ", after)
    printf "%s\t%s\t%s\t%s\n", id, fam, trim(before), trim(after)
}

# A step: a statement that does something (not a declaration, control,
# allocation, free or return).
function is_step(s,    t) {
    t = trim(s)
    if (t !~ /;$/) return 0
    if (t ~ /^(return|if|for|while|else|goto|free|int |float |double |const |size_t |struct |static |\/\*|\*)/) return 0
    if (t ~ /^(rc|[a-zA-Z_]+) = .*malloc/) return 0
    if (t ~ /^rc = /) return 0
    if (t !~ /^[a-zA-Z_]/) return 0
    # a declaration of any other type: `uint64_t total = 2;`, `mm_vec b0, b1;`
    if (t ~ /^[a-zA-Z_][a-zA-Z_0-9]* +\**[a-zA-Z_][a-zA-Z_0-9]*(\[[^]]*\])* *(=|;|,)/) return 0
    if (gsub(/\(/, "(", t) != gsub(/\)/, ")", t)) return 0
    return 1
}

# A short name for a step: its call's name or the assigned lvalue's name.
function step_name(s,    t) {
    t = trim(s)
    sub(/[ (\[].*/, "", t)
    gsub(/[^a-zA-Z0-9_]/, "", t)
    return t
}

BEGIN {
    FS = "\t"
    while ((getline line < rules) > 0) {
        if (line ~ /^#/ || line == "") continue
        split(line, f, "\t")
        nr++
        R_fn[nr] = f[1]; R_fam[nr] = f[2]; R_what[nr] = f[3]
        R_from[nr] = f[4]; R_to[nr] = f[5]
    }
    close(rules)
}

{ L[++N] = $0 }

END {
    # Which function each line belongs to, and whether it is computation.
    cur = ""
    for (n = 1; n <= N; n++) {
        s = L[n]
        if (s ~ /^(static )?(int|void|float|double) [a-z_0-9]+\(/) {
            cur = s; sub(/^(static )?(int|void|float|double) /, "", cur); sub(/\(.*/, "", cur)
            body = 0; F[n] = ""; continue
        }
        if (s ~ /^}/) { cur = ""; F[n] = ""; continue }
        F[n] = cur
        if (cur != "" && !body && (s ~ /^    for \(/ || (is_step(s) && s !~ /return/)))
            body = 1
        B[n] = body
    }
    for (n = 1; n <= N; n++) {
        fn = F[n]
        if (fn == "" || fn !~ funcs) continue
        s = L[n]
        if (!B[n]) {
            for (r = 1; r <= nr; r++) {
                if (R_fam[r] != "check" || fn !~ R_fn[r] || !index(s, R_from[r])) continue
                t = lsub(s, R_from[r], R_to[r])
                emit(fn "." R_fam[r] "." R_what[r], R_fam[r], s, t, n, t)
            }
            continue
        }
        # bound: every counted loop
        if (s ~ /for \(int [a-z_0-9]+ = [^;]+; [^;]*< [^;]+; [a-z_0-9]+\+\+\)/) {
            k = index(s, "for (int ") + 9
            rest = substr(s, k)
            v = rest; sub(/ .*/, "", v)
            st = rest; sub(/^[a-z_0-9]+ = /, "", st); sub(/;.*/, "", st)
            cond = rest; sub(/^[^;]*; /, "", cond); sub(/;.*/, "", cond)
            cmp = v " < "
            if (index(cond, cmp)) {
                e = substr(cond, index(cond, cmp) + length(cmp))
                emit(fn ".bound." v ".le", "bound", s, lsub(s, cmp e ";", v " <= " e ";"), n, lsub(s, cmp e ";", v " <= " e ";"))
                t = lsub(s, cmp e ";", cmp e " - 1;")
                emit(fn ".bound." v ".short", "bound", s, t, n, t)
                if (st != "1") {
                    t = lsub(s, v " = " st ";", v " = " st " + 1;")
                    if (st == "0") t = lsub(s, v " = 0;", v " = 1;")
                    emit(fn ".bound." v ".late", "bound", s, t, n, t)
                }
            }
        }
        # init: accumulators that start at zero
        if (s ~ /float [a-z_0-9]+ = 0\.0f;/) {
            v = s; sub(/.*float /, "", v); sub(/ .*/, "", v)
            t = lsub(s, "= 0.0f;", "= 1.0f;")
            emit(fn ".init." v ".one", "init", s, t, n, t)
        }
        # skip and dup: every step (not the last line of a statement
        # continued from the line before, as an initializer's)
        if (is_step(s) && L[n - 1] !~ /(,|=|\(|&&|\|\|)[ \t]*$/) {
            ind = s; sub(/[^ ].*/, "", ind)
            w = step_name(s)
            t = ind "(void)0; /* skipped: " trim(s) " */"
            emit(fn ".skip." w, "skip", s, "(left out)", n, t)
            t = ind "{ " trim(s) " " trim(s) " }"
            emit(fn ".dup." w, "dup", s, "(done twice)", n, t)
            # order: a top-level call moved after the next top-level call
            if (s ~ /^    [a-z_]+\(.*\);$/) {
                for (m = n + 1; m <= N && F[m] == fn; m++)
                    if (L[m] ~ /^    [a-z_]+\(.*\);$/ && is_step(L[m])) break
                if (m <= N && F[m] == fn)
                    emit(fn ".order." w ".after." step_name(L[m]), "order", s, "(moved after " step_name(L[m]) ")", n, L[m], m, s)
            }
        }
        # anchored rules
        for (r = 1; r <= nr; r++) {
            if (fn !~ R_fn[r] || !index(s, R_from[r])) continue
            t = lsub(s, R_from[r], R_to[r])
            emit(fn "." R_fam[r] "." R_what[r], R_fam[r], s, t, n, t)
        }
    }
}
