# results.jq: Gradescope's results.json from compose.awk's fields, read
# whole as one string (jq -R -s). Each field ends with a NUL byte: the
# total score, the output shown above the tests, then six for each test
# (name, number, score, max_score, status, output); the last is the word
# "end", without a NUL, so that a list cut short is an error, not a
# results.json with tests missing. Every string is written, and escaped,
# by jq; the scores, which compose.awk rounds to hundredths, are numbers.
split("\u0000") as $f
| ($f | length) as $n
| if $n < 3 or $f[$n - 1] != "end" or ($n - 3) % 6 != 0 then
    error("results.jq: compose.awk's fields are not whole (\($n) fields, the last '\($f[$n - 1] // "")')")
  else
    {
      score: ($f[0] | tonumber),
      output: $f[1],
      visibility: "visible",
      stdout_visibility: "hidden",
      tests: [
        range(2; $n - 1; 6) as $i
        | {
            name: $f[$i],
            number: $f[$i + 1],
            score: ($f[$i + 2] | tonumber),
            max_score: ($f[$i + 3] | tonumber),
            status: $f[$i + 4],
            output: $f[$i + 5],
            visibility: "visible"
          }
      ]
    }
  end
