--[[
book.lua: the kit's book filter (pandoc 2.17 or later).

It turns book.md plus chapters/NN-slug.md into one document, and gives
the chapters' markup, listed here, its meaning:

  ::: {.chapters} :::              in book.md: the chapters go here, in
                                   the order of their NN- prefixes
  # Title {#ch:slug}               a chapter; its number is its file's NN
  ```{.listing name=N} ```         the code between /* @listing N */ and
                                   /* @end N */ in the one source file
                                   that has that marker, labelled with
                                   the file's path. The files searched
                                   are the metadata's sources; each
                                   marker name is in one of them only.
                                   (No file=: the name finds the file.)
  ![Caption](plots/x.png){#fig:x}  Figure C.k; @fig:x refers to it. A
                                   figure under plots/ is vector, drawn
                                   by plots/x.gp or tools/book/diagrams/x.tex:
                                   the PDF <builddir>/plots/x.pdf in
                                   LaTeX, at the
                                   size it was drawn (its fonts are the
                                   printed sizes), and the SVG converted
                                   from it in HTML and EPUB, at the same
                                   share of the column (.png, .svg, .pdf
                                   or no extension all mean the same
                                   figure). In HTML a click enlarges it
                                   (pure CSS, no script).
  | table |  + Table: Caption {#tbl:x}
                                   Table C.k; @tbl:x refers to it. Every
                                   table is numbered; in print it never
                                   splits across pages.
  ::: {.generated file=F #tbl:x}   a generated table; the div's text, if
  Caption.                         any, is its caption
  @ch:slug                         "Chapter C"
  ::: exercise                     Exercise C.k; @ex:id refers to one
  ::: question                     Question C.k (to think about, no code)
                                   with an id
  ::: {.generated file=F}          the Markdown file <builddir>/plots/data/F
                                   (a number followed by % is set with a
                                   no-break space before the %, as the
                                   prose writes it: 70.9 %)
  []{.value key=K}                 K's value, from <builddir>/plots/data/
                                   *.values (lines key=value)
  [words]{.if test="A > B"}        the words only when the test holds;
  ::: {.if test="A == 0"}          the blocks only when it holds. A and
                                   B are value keys or numbers; OP is
                                   == != < <= > >=; clauses join with
                                   " and ". The prose keeps each wording
                                   and the run's numbers pick one.
  [words]{.holds test="A < B"}     the words always, as a plain span; a
                                   claim the words make of the run,
                                   asserted: when the test (the same
                                   grammar and keys as .if) does not
                                   hold, the build stops, naming the
                                   chapter file, the test and both
                                   values. Prose written for one run
                                   states its comparisons this way, so
                                   that data that say otherwise fail.
  ::: instructor-only / student-only   kept in that edition only
  :::: answer (inside a question or exercise)  instructor edition only

Anything it cannot resolve (a file, a marker, a value, a figure, a
reference) stops the build: the filter raises an error naming the
chapter file, and pandoc exits non-zero.

Metadata it reads (the Makefile passes them with -M):
  edition   student (default) or instructor
  builddir  where `make plots` wrote plots/ and plots/data/ (default build)
  chapters  the chapter files, separated by spaces (default: every
            chapters/[0-9][0-9]-*.md, in name order)
  sources   the source files listings come from, separated by spaces
            (book.mk's BOOK_SOURCES: given/, include/, tests/,
            tools/runs/, and starter/ for the student edition or
            solutions/ for the instructor edition; no default)
]]

local stringify = pandoc.utils.stringify

local edition = "student"
local builddir = "build"
local chapter_files = nil

-- ---------------------------------------------------------------------
-- Errors and files
-- ---------------------------------------------------------------------

-- Problems are collected and reported together at the end, and then the
-- filter raises an error, so pandoc exits non-zero and writes nothing.
-- (An error raised inside a walk would reach the user wrapped and
-- escaped, so walk callbacks are guarded and the error is raised later.)
local errors = {}

local function fail(ctx, msg)
  error({ book_error = "book: ERROR in " .. ctx.file .. ": " .. msg }, 0)
end

local function record(e)
  if type(e) == "table" and e.book_error then
    errors[#errors + 1] = e.book_error
  else
    errors[#errors + 1] = "book: internal error in the filter: " .. tostring(e)
  end
end

-- A walk filter whose callbacks record their errors instead of raising.
local function guarded(filter)
  local out = {}
  for k, fn in pairs(filter) do
    out[k] = function(el)
      local ok, res = pcall(fn, el)
      if ok then
        return res
      end
      record(res)
      return nil
    end
  end
  return out
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local text = f:read("a")
  f:close()
  return text
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then
    f:close()
    return true
  end
  return false
end

local function split_lines(text)
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    lines[#lines + 1] = line
  end
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

-- Files matching a shell glob, in name order (pandoc 2.17's Lua has no
-- directory listing).
local function glob(pattern)
  local files = {}
  local p = io.popen("ls -1d " .. pattern .. " 2>/dev/null")
  if p then
    for line in p:lines() do
      files[#files + 1] = line
    end
    p:close()
  end
  table.sort(files)
  return files
end

local function datadir()
  return builddir .. "/plots/data"
end

-- ---------------------------------------------------------------------
-- Literate code: listings pulled from source files by marker
-- ---------------------------------------------------------------------

local languages = {
  c = "c", h = "c", py = "python", sh = "bash", gp = "gnuplot",
  mk = "makefile", md = "markdown", lua = "lua",
}

local function escape_pattern(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end

-- The lines between /* @listing name */ and /* @end name */ in path.
local function extract_listing(ctx, path, name)
  local text = read_file(path)
  if not text then
    fail(ctx, "listing '" .. name .. "': source file '" .. path ..
         "' does not exist")
  end
  local n = escape_pattern(name)
  local open_pat = "^%s*/%*%s*@listing%s+" .. n .. "%s*%*/%s*$"
  local close_pat = "^%s*/%*%s*@end%s+" .. n .. "%s*%*/%s*$"
  local any_marker = "^%s*/%*%s*@[a-z]+%s+[%w_%-%.]+%s*%*/%s*$"
  local lines = split_lines(text)
  local first, last
  for i, line in ipairs(lines) do
    if line:match(open_pat) then
      if first then
        fail(ctx, "listing marker '/* @listing " .. name .. " */' appears " ..
             "twice in " .. path .. " (lines " .. first - 1 .. " and " .. i .. ")")
      end
      first = i + 1
    elseif line:match(close_pat) then
      if not first then
        fail(ctx, "in " .. path .. ", '/* @end " .. name .. " */' comes " ..
             "before '/* @listing " .. name .. " */'")
      end
      if not last then
        last = i - 1
      end
    end
  end
  if not first then
    local known = {}
    for _, line in ipairs(lines) do
      local k = line:match("^%s*/%*%s*@listing%s+([%w_%-%.]+)%s*%*/")
      if k then
        known[#known + 1] = k
      end
    end
    fail(ctx, "listing marker '/* @listing " .. name .. " */' not found in " ..
         path .. " (markers there: " ..
         (#known > 0 and table.concat(known, ", ") or "none") .. ")")
  end
  if not last then
    fail(ctx, "listing '" .. name .. "' in " .. path ..
         " has no closing '/* @end " .. name .. " */'")
  end
  local body = {}
  for i = first, last do
    if not lines[i]:match(any_marker) then -- markers of nested listings
      body[#body + 1] = lines[i]
    end
  end
  while #body > 0 and body[1]:match("^%s*$") do
    table.remove(body, 1)
  end
  while #body > 0 and body[#body]:match("^%s*$") do
    table.remove(body)
  end
  if #body == 0 then
    fail(ctx, "listing '" .. name .. "' in " .. path .. " is empty")
  end
  return table.concat(body, "\n")
end

local function latex_caption(command, inlines)
  local out = pandoc.List({ pandoc.RawInline("latex", "\\" .. command .. "{") })
  out:extend(inlines)
  out:insert(pandoc.RawInline("latex", "}"))
  return out
end

-- The listing index: every /* @listing NAME */ marker of the source
-- files (metadata "sources"), NAME -> { path = file, line = n }. Built
-- once, before the chapters; a name in two places is an error naming
-- both (starter/ and solutions/ are never in the same edition's sources).
local source_files = nil
local listing_index = {}
local listing_marker = "^%s*/%*%s*@listing%s+([%w_%-%.]+)%s*%*/%s*$"

local function index_listings()
  local ctx = { file = "the listing sources" }
  listing_index = {}
  for _, path in ipairs(source_files or {}) do
    if edition == "student" and path:match("^%.?/?solutions/") then
      fail(ctx, path .. " is among the student edition's sources, but the " ..
           "student edition never shows solutions/")
    end
    local text = read_file(path)
    if not text then
      fail(ctx, "source file '" .. path .. "' does not exist")
    end
    for i, line in ipairs(split_lines(text)) do
      local name = line:match(listing_marker)
      if name then
        local prev = listing_index[name]
        if prev then
          record({ book_error = "book: ERROR in " .. ctx.file .. ": listing " ..
                   "marker '/* @listing " .. name .. " */' is in two places, " ..
                   prev.path .. " line " .. prev.line .. " and " .. path ..
                   " line " .. i .. ": a listing is found by its name, so " ..
                   "rename one" })
        else
          listing_index[name] = { path = path, line = i }
        end
      end
    end
  end
end

local function listing(ctx, cb)
  local name = cb.attributes.name
  if not name or name == "" then
    fail(ctx, "a listing needs name=\"...\", the name of its " ..
         "/* @listing NAME */ marker")
  end
  local where = listing_index[name]
  if cb.attributes.file then
    fail(ctx, "listing '" .. name .. "': drop file=\"" .. cb.attributes.file ..
         "\"; a listing is found by its name alone" ..
         (where and " (this one is in " .. where.path .. ")" or ""))
  end
  if not where then
    local near = {}
    for k in pairs(listing_index) do
      if k:sub(1, 4) == name:sub(1, 4) then
        near[#near + 1] = k
      end
    end
    table.sort(near)
    while #near > 6 do
      table.remove(near)
    end
    fail(ctx, "listing '" .. name .. "': no marker '/* @listing " .. name ..
         " */' in the " .. #(source_files or {}) .. " source files of the " ..
         edition .. " edition" ..
         (source_files and "" or " (none given: pass --metadata=sources:\"FILE ...\", as book.mk does)") ..
         (#near > 0 and "; similar names: " .. table.concat(near, ", ") or ""))
  end
  local path = where.path
  local code = extract_listing(ctx, path, name)
  local classes = {}
  for _, c in ipairs(cb.classes) do
    if c ~= "listing" then
      classes[#classes + 1] = c
    end
  end
  if #classes == 0 then
    local ext = path:match("%.([%w]+)$") or ""
    classes[1] = languages[ext] or (path:match("Makefile$") and "makefile") or "c"
  end
  local label = pandoc.List({ pandoc.Code(path) })
  local caption
  if FORMAT:match("latex") then
    caption = pandoc.Plain(latex_caption("kitlisting", label))
  else
    caption = pandoc.Para(label)
  end
  return pandoc.Div({ caption, pandoc.CodeBlock(code, pandoc.Attr("", classes)) },
                    pandoc.Attr("", { "listing" }, { { "data-name", name } }))
end

-- ---------------------------------------------------------------------
-- Measured numbers: .values files and generated Markdown
-- ---------------------------------------------------------------------

local values = nil

local function load_values(ctx)
  if values then
    return values
  end
  values = {}
  for _, path in ipairs(glob(datadir() .. "/*.values")) do
    local text = read_file(path) or ""
    for i, line in ipairs(split_lines(text)) do
      if not line:match("^%s*$") and not line:match("^%s*#") then
        local k, v = line:match("^%s*([^=%s]+)%s*=%s*(.-)%s*$")
        if not k then
          fail(ctx, path .. " line " .. i .. " is not key=value: " .. line)
        end
        if values[k] and values[k].value ~= v then
          fail(ctx, "value key '" .. k .. "' is set twice, in " ..
               values[k].file .. " and " .. path)
        end
        values[k] = { value = v, file = path }
      end
    end
  end
  return values
end

local function value(ctx, span)
  local key = span.attributes.key
  if not key or key == "" then
    fail(ctx, "a []{.value} span needs key=\"...\"")
  end
  local v = load_values(ctx)[key]
  if not v then
    local near = {}
    local prefix = key:match("^([^.]+%.)") or key
    for k, _ in pairs(values) do
      if k:sub(1, #prefix) == prefix then
        near[#near + 1] = k
      end
    end
    table.sort(near)
    fail(ctx, "unknown value key '" .. key .. "': no line '" .. key ..
         "=...' in " .. datadir() .. "/*.values (did make plots run? keys " ..
         "with that prefix: " .. (#near > 0 and table.concat(near, ", ") or "none") .. ")")
  end
  return pandoc.Span({ pandoc.Str(v.value) }, pandoc.Attr("", { "value" }, { { "data-key", key } }))
end

-- Wording chosen by the data: a span [words]{.if test="T"} or a div
-- ::: {.if test="T"} keeps its content when the test T holds and
-- vanishes when it does not, so that the prose keeps every wording and
-- the run's numbers pick one. T is one comparison, or several joined
-- by " and ", each "A OP B": A and B a value key or a number, OP one of
-- == != < <= > >= (== and != compare text when either side is no
-- number). An unknown key, or a number expected and text found, stops
-- the build as an unknown value does.
-- holds() returns true, or false and the first clause that fails with
-- the text of its two operands (what a .holds assertion reports); kind
-- ("if" or "holds") names the markup in its errors.
local function operand(ctx, word, kind)
  local n = tonumber(word)
  if n then
    return n, word
  end
  local v = load_values(ctx)[word]
  if not v then
    fail(ctx, "an ." .. kind .. " test names the value key '" .. word .. "', which no " ..
         "*.values file in " .. datadir() .. " sets")
  end
  return tonumber(v.value), v.value
end

local function holds(ctx, test, kind)
  kind = kind or "if"
  if not test or test:match("^%s*$") then
    fail(ctx, "an ." .. kind .. " span or div needs test=\"KEY OP VALUE\"")
  end
  local rest = test .. " and "
  for clause in rest:gmatch("(.-)%s+and%s+") do
    local a, op, b = clause:match("^%s*(%S+)%s*([=!<>]=?)%s*(%S+)%s*$")
    local ops = { ["=="] = true, ["!="] = true, ["<"] = true, ["<="] = true,
                  [">"] = true, [">="] = true }
    if not a or not ops[op] then
      fail(ctx, "the ." .. kind .. " test '" .. test .. "' is not 'A OP B [and ...]' " ..
           "with OP one of == != < <= > >=")
    end
    local na, ta = operand(ctx, a, kind)
    local nb, tb = operand(ctx, b, kind)
    local ok
    if op == "==" or op == "!=" then
      local same = (na and nb) and na == nb or (not (na and nb) and ta == tb)
      ok = (op == "==") == same
    else
      if not (na and nb) then
        fail(ctx, "the ." .. kind .. " test '" .. test .. "' compares '" .. ta .. "' and '" ..
             tb .. "' with " .. op .. ", but one of them is no number")
      end
      ok = (op == "<" and na < nb) or (op == "<=" and na <= nb) or
           (op == ">" and na > nb) or (op == ">=" and na >= nb)
    end
    if not ok then
      return false, clause:match("^%s*(.-)%s*$"), a .. " = " .. ta, b .. " = " .. tb
    end
  end
  return true
end

local function choose(ctx, el)
  if holds(ctx, el.attributes.test) then
    return el.content
  end
  return {}
end

-- A claim asserted on the run's values: [words]{.holds test="T"} keeps
-- its words whatever the data, and stops the build when T does not
-- hold, so that a sentence written for one run cannot outlive data that
-- say otherwise.
local function assert_holds(ctx, span)
  local test = span.attributes.test
  local ok, clause, va, vb = holds(ctx, test, "holds")
  if not ok then
    fail(ctx, "the .holds test '" .. test .. "' does not hold" ..
         (clause ~= test and " (its clause '" .. clause .. "' fails)" or "") ..
         ": " .. va .. ", " .. vb .. " (words: \"" .. stringify(span.content) .. "\")")
  end
  return span.content
end

local function generated(ctx, div)
  local file = div.attributes.file
  if not file or file == "" then
    fail(ctx, "a .generated block needs file=\"...\"")
  end
  local path = datadir() .. "/" .. file
  local text = read_file(path)
  if not text then
    fail(ctx, "generated file '" .. path .. "' does not exist (it is written " ..
         "by a data writer in tools/runs/plotdata/ during make plots)")
  end
  local blocks = pandoc.read(text, "markdown").blocks
  -- House style: "70.9 %", with a no-break space, as the prose has it.
  blocks = pandoc.Blocks(blocks):walk({
    Str = function(str)
      local t = str.text:gsub("(%d)%%", "%1\u{a0}%%")
      if t ~= str.text then
        return pandoc.Str(t)
      end
    end,
  })
  -- The div's own text is the caption of the table it brings in, and
  -- its id the table's.
  local caption = pandoc.utils.blocks_to_inlines(div.content)
  local found = false
  blocks = blocks:walk({
    Table = function(tbl)
      if found then
        return nil
      end
      found = true
      if #caption > 0 then
        tbl.caption = { long = { pandoc.Plain(caption) } }
      end
      if div.identifier ~= "" then
        tbl.attr = pandoc.Attr(div.identifier, tbl.attr.classes, tbl.attr.attributes)
      end
      return tbl
    end,
  })
  if (#caption > 0 or div.identifier ~= "") and not found then
    fail(ctx, "the generated block of '" .. file .. "' has a caption or an id, " ..
         "but the file holds no table")
  end
  return pandoc.Div(blocks, pandoc.Attr("", { "generated" }, { { "data-file", file } }))
end

-- ---------------------------------------------------------------------
-- Numbering: chapters, sections, figures, exercises; references
-- ---------------------------------------------------------------------

local refs = {} -- id -> { text = "Figure 2.1", chapter = file }
local header_ids = {} -- every header id in the book, to keep them unique

local function add_ref(ctx, id, text)
  if refs[id] then
    fail(ctx, "the id '" .. id .. "' is used twice (also in " .. refs[id].file .. ")")
  end
  refs[id] = { text = text, file = ctx.file }
end

local function is_figure(para)
  return #para.content == 1 and para.content[1].t == "Image" and
         (para.content[1].title or ""):match("^fig:") ~= nil
end

-- The book's text width in print, in points (A4, 2.3 cm margins: the
-- figures under plots/ are drawn for it; see plots/common.gp).
local TEXTWIDTH_PT = 16.4 / 2.54 * 72

-- A figure under plots/ is drawn as <builddir>/plots/NAME.pdf, with an
-- SVG converted from it: LaTeX takes the PDF, HTML and EPUB the SVG.
local function vector_src(src)
  local base = src:match("^(plots/.+)%.png$") or src:match("^(plots/.+)%.svg$") or
               src:match("^(plots/.+)%.pdf$") or src:match("^(plots/[^.]+)$")
  if not base then
    return nil
  end
  if FORMAT:match("latex") then
    return base .. ".pdf"
  end
  return base .. ".svg"
end

local function check_image(ctx, img)
  local src = img.src
  if src:match("^%a[%w+.-]*:") or src:match("^//") then
    if not src:match("^data:") then
      fail(ctx, "image '" .. src .. "' is outside the kit; the book refers to nothing outside itself")
    end
    return img
  end
  local vec = vector_src(src)
  if vec then
    if not exists(builddir .. "/" .. vec) then
      fail(ctx, "figure '" .. src .. "': " .. builddir .. "/" .. vec .. " not found " ..
           "(is there a plots/*.gp or tools/book/diagrams/*.tex that draws it, and did make plots run?)")
    end
    img.src = builddir .. "/" .. vec
    return img
  end
  if exists(builddir .. "/" .. src) then
    img.src = builddir .. "/" .. src
  elseif not exists(src) then
    fail(ctx, "image '" .. src .. "' not found in " .. builddir ..
         "/ (is there a plots/*.gp that draws it, and did make plots run?)")
  end
  return img
end

-- The width of an SVG in points (pdftocairo writes width="123pt"), or nil.
local function svg_width_pt(path)
  local text = read_file(path)
  if not text then
    return nil
  end
  local head = text:sub(1, 2000):match("<svg[^>]*>")
  if not head then
    return nil
  end
  local w, unit = head:match('%swidth="([%d.]+)(%a*)"')
  w = tonumber(w)
  if not w then
    return nil
  end
  if unit == "pt" or unit == "" then
    return w
  elseif unit == "px" then
    return w * 0.75
  elseif unit == "cm" then
    return w / 2.54 * 72
  elseif unit == "mm" then
    return w / 25.4 * 72
  elseif unit == "in" then
    return w * 72
  end
  return nil
end

-- A figure's width in HTML, unless the chapter gives one: the same share
-- of the column as of the printed text width, so that its lettering is
-- in proportion to the text around it, as on paper.
local function default_width(src)
  local w = src:match("%.svg$") and svg_width_pt(src)
  if not w then
    return nil
  end
  return string.format("%d%%", math.max(30, math.min(100, math.floor(w / TEXTWIDTH_PT * 100 + 0.5))))
end

-- A caption as plain text, for an image's alt text: the mathematics as
-- a reader would say it, not as TeX.
local function math_text(tex)
  local t = tex
  local function group(pat, fn)
    local n
    repeat
      t, n = t:gsub(pat, fn)
    until n == 0
  end
  group("\\sqrt%s*(%b{})", function(g)
    g = g:sub(2, -2)
    return #g > 1 and ("√(" .. g .. ")") or ("√" .. g)
  end)
  group("\\bar%s*(%b{})", function(g) return g:sub(2, -2) .. "\u{304}" end)
  group("\\overline%s*(%b{})", function(g) return g:sub(2, -2) .. "\u{305}" end)
  group("\\[a-z]*frac%s*(%b{})%s*(%b{})", function(a, b) return a:sub(2, -2) .. "/" .. b:sub(2, -2) end)
  group("\\(%a+)%s*(%b{})", function(cmd, g)
    if cmd == "text" or cmd == "mathrm" or cmd == "operatorname" or cmd == "mathbf" or
       cmd == "mathit" or cmd == "textrm" or cmd == "mathsf" or cmd == "texttt" then
      return g:sub(2, -2)
    end
    return nil
  end)
  local words = {
    times = "×", cdot = "·", le = "≤", leq = "≤", ge = "≥", geq = "≥", approx = "≈",
    infty = "∞", to = "→", pm = "±", top = "T", ne = "≠", neq = "≠", sum = "∑",
    alpha = "α", beta = "β", epsilon = "ε", varepsilon = "ε", theta = "θ",
    lambda = "λ", mu = "μ", sigma = "σ", tau = "τ", omega = "ω", partial = "∂",
    ldots = "…", dots = "…", cdots = "…", odot = "⊙", propto = "∝", infin = "∞",
  }
  t = t:gsub("\\([,;:! ])", " "):gsub("\\quad", " "):gsub("\\qquad", " ")
  t = t:gsub("\\left", ""):gsub("\\right", ""):gsub("\\[Bb]ig+[lr]?", "")
  t = t:gsub("\\(%a+)", function(w) return words[w] or w end)
  local sub = {
    a = "ₐ", e = "ₑ", h = "ₕ", i = "ᵢ", j = "ⱼ", k = "ₖ", l = "ₗ", m = "ₘ", n = "ₙ",
    o = "ₒ", p = "ₚ", r = "ᵣ", s = "ₛ", t = "ₜ", u = "ᵤ", v = "ᵥ", x = "ₓ",
    ["0"] = "₀", ["1"] = "₁", ["2"] = "₂", ["3"] = "₃", ["4"] = "₄",
    ["5"] = "₅", ["6"] = "₆", ["7"] = "₇", ["8"] = "₈", ["9"] = "₉",
  }
  t = t:gsub("_{?(%w)}?", function(c) return sub[c] or ("_" .. c) end)
  t = t:gsub("[{}]", ""):gsub("%s+", " ")
  return t
end

local function plain_text(inlines)
  local out = {}
  pandoc.Inlines(inlines):walk({
    Str = function(x) out[#out + 1] = x.text end,
    Space = function() out[#out + 1] = " " end,
    SoftBreak = function() out[#out + 1] = " " end,
    LineBreak = function() out[#out + 1] = " " end,
    Code = function(x) out[#out + 1] = x.text end,
    Math = function(x) out[#out + 1] = math_text(x.text) end,
  })
  return (table.concat(out):gsub("%s+", " "))
end

local function figure(ctx, para)
  local img = para.content[1]
  ctx.figures = ctx.figures + 1
  local number = ctx.prefix .. ctx.figures
  local label = "Figure " .. number
  if img.identifier ~= "" then
    add_ref(ctx, img.identifier, label)
  end
  local caption = pandoc.List({ pandoc.Strong({ pandoc.Str(label .. ".") }), pandoc.Space() })
  caption:extend(img.caption)
  img.caption = caption
  if (FORMAT:match("html") or FORMAT:match("epub")) and not img.attributes.width and
     not img.attributes.height then
    img.attributes.width = default_width(img.src)
  end
  if FORMAT:match("html") or FORMAT:match("epub") then
    -- <figure>, with an alt text in words, not TeX. In HTML the image
    -- sits inside a label with a hidden checkbox, so that a click (or
    -- Space) shows it at full size and a second click puts it back, with
    -- CSS alone (tools/book/book.css, "Figures"). E-readers zoom by
    -- themselves.
    local alt = plain_text(caption)
    local id = img.identifier
    local image = pandoc.Image({ pandoc.Str(alt) }, img.src, "",
                               pandoc.Attr("", {}, img.attributes))
    local body = { image }
    if FORMAT:match("html") then
      body = {
        pandoc.RawInline("html", '<label class="zoom" title="Click to enlarge; click again to close">' ..
                                 '<input type="checkbox" aria-label="' .. label .. ' at full size" />'),
        image,
        pandoc.RawInline("html", '</label>'),
      }
    end
    return {
      pandoc.RawBlock("html", '<figure' .. (id ~= "" and (' id="' .. id .. '"') or "") .. '>'),
      pandoc.Plain(body),
      pandoc.RawBlock("html", "<figcaption>"),
      pandoc.Plain(caption),
      pandoc.RawBlock("html", "</figcaption>"),
      pandoc.RawBlock("html", "</figure>"),
    }
  end
  return para
end

-- A table: Table C.k, its caption from "Table: text {#tbl:x}" or from
-- the .generated block that brought it in. In LaTeX it is set in a
-- table float that never splits (tools/book/header.tex, kittable).
local function table_caption_id(tbl)
  local long = tbl.caption and tbl.caption.long or {}
  local inlines = pandoc.utils.blocks_to_inlines(long)
  local id = tbl.attr.identifier
  -- a trailing {#tbl:x} in the caption text
  local last = inlines[#inlines]
  if last and last.t == "Str" then
    local tid = last.text:match("^{#(tbl:[%w%-_:.]+)}$")
    if tid then
      id = tid
      inlines:remove(#inlines)
      while #inlines > 0 and (inlines[#inlines].t == "Space" or inlines[#inlines].t == "SoftBreak") do
        inlines:remove(#inlines)
      end
    end
  end
  return inlines, id
end

local function numbered_table(ctx, tbl)
  ctx.tables = (ctx.tables or 0) + 1
  local number = ctx.prefix .. ctx.tables
  local label = "Table " .. number
  local text, id = table_caption_id(tbl)
  if id ~= "" then
    if not id:match("^tbl:") then
      fail(ctx, "a table's id '" .. id .. "' must start with 'tbl:'")
    end
    add_ref(ctx, id, label)
  end
  local caption = pandoc.List({ pandoc.Strong({ pandoc.Str(label .. ".") }) })
  if #text > 0 then
    caption:insert(pandoc.Space())
    caption:extend(text)
  end
  tbl.attr = pandoc.Attr("", tbl.attr.classes, tbl.attr.attributes)
  -- A table of short cells (numbers, names) takes its columns' natural
  -- widths: a pipe table's relative widths only reflect how long its
  -- source lines were.
  local longest = 0
  local function rows(list)
    for _, row in ipairs(list or {}) do
      for _, cell in ipairs(row.cells or {}) do
        longest = math.max(longest, utf8.len(stringify(cell.contents)) or 0)
      end
    end
  end
  rows(tbl.head and tbl.head.rows)
  for _, body in ipairs(tbl.bodies or {}) do
    rows(body.head)
    rows(body.body)
  end
  if longest <= 24 then
    for i, cs in ipairs(tbl.colspecs) do
      tbl.colspecs[i] = { cs[1], pandoc.ColWidthDefault }
    end
  end
  if FORMAT:match("latex") then
    tbl.caption = { long = {} }
    local cap = pandoc.List({ pandoc.RawInline("latex", (id ~= "" and ("\\hypertarget{" .. id .. "}{}") or "") ..
                                                      "\\captionof{table}{") })
    cap:extend(caption)
    cap:insert(pandoc.RawInline("latex", "}"))
    return {
      pandoc.RawBlock("latex", "\\begin{kittable}"),
      pandoc.Plain(cap),
      tbl,
      pandoc.RawBlock("latex", "\\end{kittable}"),
    }
  end
  tbl.caption = { long = { pandoc.Plain(caption) } }
  return pandoc.Div({ tbl }, pandoc.Attr(id, { "table" }))
end

-- A numbered box: an exercise (code to write, with its test command) or
-- a question (to think about or try by hand). Each kind counts on its own
-- within a chapter: Exercise C.k, Question C.k.
local boxes = {
  exercise = { label = "Exercise", counter = "exercises", env = "kitexercise" },
  question = { label = "Question", counter = "questions", env = "kitquestion" },
}

local function numbered_box(ctx, div, kind)
  local box = boxes[kind]
  ctx[box.counter] = (ctx[box.counter] or 0) + 1
  local number = ctx.prefix .. ctx[box.counter]
  local label = box.label .. " " .. number
  if div.identifier ~= "" then
    add_ref(ctx, div.identifier, label)
  end
  local head = pandoc.Strong({ pandoc.Str(label .. ".") })
  local first = div.content[1]
  if first and (first.t == "Para" or first.t == "Plain") then
    first.content:insert(1, pandoc.Space())
    first.content:insert(1, head)
  else
    div.content:insert(1, pandoc.Para({ head }))
  end
  div.attributes["data-number"] = number
  if FORMAT:match("latex") then
    -- A short box never breaks across pages (a line alone on the next
    -- page helps nobody); a long one, with code or many lines, may.
    local long = #stringify(div) > 1200
    pandoc.Blocks(div.content):walk({
      CodeBlock = function() long = true end,
      Table = function() long = true end,
    })
    div.content:insert(1, pandoc.RawBlock("latex", "\\begin{" .. box.env .. "}" ..
                                                   (long and "" or "[unbreakable]")))
    div.content:insert(pandoc.RawBlock("latex", "\\end{" .. box.env .. "}"))
  end
  return div
end

-- An answer or teaching note (`:::: answer` inside a question or an
-- exercise): in the instructor edition only, headed "Answer.".
local function answer_div(div)
  if edition ~= "instructor" then
    return {}
  end
  local head = pandoc.Strong({ pandoc.Str("Answer.") })
  local first = div.content[1]
  if first and (first.t == "Para" or first.t == "Plain") then
    first.content:insert(1, pandoc.Space())
    first.content:insert(1, head)
  else
    div.content:insert(1, pandoc.Para({ head }))
  end
  if FORMAT:match("latex") then
    div.content:insert(1, pandoc.RawBlock("latex", "\\par\\smallskip\\hrule\\smallskip"))
  end
  return div
end

local function edition_div(div)
  if div.classes:includes("answer") then
    return answer_div(div)
  end
  if div.classes:includes("instructor-only") and edition ~= "instructor" then
    return {}
  end
  if div.classes:includes("student-only") and edition ~= "student" then
    return {}
  end
  return nil
end

-- Headers: the chapter's own number (from its file name) and its
-- sections' numbers, so that the HTML and the PDF agree.
local function number_headers(ctx, blocks)
  local counts = { 0, 0, 0, 0, 0, 0 }
  local out = pandoc.List()
  local seen_chapter = false
  for _, b in ipairs(blocks) do
    if b.t == "Header" and b.identifier ~= "" then
      -- Chapters are parsed one by one, so two of them may both have a
      -- section "What the tests look for": the later one gets a suffix.
      local id, k = b.identifier, 1
      while header_ids[id] do
        k = k + 1
        id = b.identifier .. "-" .. k
      end
      header_ids[id] = true
      b.identifier = id
    end
    if b.t == "Header" then
      if b.level == 1 then
        if seen_chapter and ctx.is_chapter then
          fail(ctx, "a second level-1 heading '" .. stringify(b.content) ..
               "': a chapter file holds one chapter (use ## for sections)")
        end
        seen_chapter = true
        ctx.title = stringify(b.content)
        if b.identifier ~= "" then
          add_ref(ctx, b.identifier, ctx.number and ("Chapter " .. ctx.number) or ctx.title)
        end
        if ctx.number then
          b.attributes.number = tostring(ctx.number)
          if FORMAT:match("latex") then
            out:insert(pandoc.RawBlock("latex", "\\setcounter{chapter}{" .. (ctx.number - 1) .. "}"))
          end
        else
          if not b.classes:includes("unnumbered") then
            b.classes:insert("unnumbered")
          end
          if FORMAT:match("latex") then
            -- the running head of an unnumbered chapter (the preface)
            local mark = pandoc.List({ pandoc.RawInline("latex", "\\markboth{") })
            mark:extend(b.content)
            mark:insert(pandoc.RawInline("latex", "}{"))
            mark:extend(b.content)
            mark:insert(pandoc.RawInline("latex", "}"))
            out:insert(b)
            b = pandoc.Plain(mark)
          end
        end
      elseif ctx.number and not b.classes:includes("unnumbered") then
        counts[b.level] = counts[b.level] + 1
        for l = b.level + 1, #counts do
          counts[l] = 0
        end
        local parts = { tostring(ctx.number) }
        for l = 2, b.level do
          parts[#parts + 1] = tostring(counts[l])
        end
        b.attributes.number = table.concat(parts, ".")
        if b.identifier ~= "" and b.identifier:match("^sec:") then
          add_ref(ctx, b.identifier, "Section " .. b.attributes.number)
        end
      elseif not ctx.number and not b.classes:includes("unnumbered") then
        b.classes:insert("unnumbered")
      end
    end
    out:insert(b)
  end
  if not seen_chapter and ctx.is_chapter then
    fail(ctx, "no chapter heading: the file must start with '# Title {#ch:slug}'")
  end
  return out
end

-- Everything that needs only the chapter itself.
local function process_chapter(ctx, blocks)
  blocks = pandoc.Blocks(blocks)
  blocks = blocks:walk(guarded({
    Div = function(div)
      if div.classes:includes("generated") then
        return generated(ctx, div)
      end
      if div.classes:includes("if") then
        return choose(ctx, div)
      end
      return edition_div(div)
    end,
  }))
  blocks = blocks:walk(guarded({
    CodeBlock = function(cb)
      if cb.classes:includes("listing") then
        return listing(ctx, cb)
      end
    end,
    Span = function(span)
      if span.classes:includes("value") then
        return value(ctx, span)
      end
      if span.classes:includes("if") then
        return choose(ctx, span)
      end
      if span.classes:includes("holds") then
        return assert_holds(ctx, span)
      end
    end,
    Image = function(img)
      return check_image(ctx, img)
    end,
    Math = function(m)
      -- In MathML, \operatorname{f} becomes <mo>f</mo>, which browsers
      -- space as an operator: "MultiHead ( X )". Upright text sets it
      -- tight, as TeX does.
      -- And texmath makes every matched ( ) stretchy, which browsers set
      -- with gaps, "( X )"; TeX stretches only \left( \right), so a
      -- plain parenthesis is braced, {(}, which texmath keeps plain.
      if FORMAT:match("html") or FORMAT:match("epub") then
        local t = m.text:gsub("\\operatorname%s*(%b{})%s*\\!", "\\text%1")
                        :gsub("\\operatorname%s*(%b{})", "\\text%1")
        t = t:gsub("()([%(%)])", function(pos, ch)
          local before = t:sub(1, pos - 1)
          if before:match("\\left%s*$") or before:match("\\right%s*$") or
             before:match("\\[bB]igg?[lr]?%s*$") or before:match("\\$") then
            return nil
          end
          return "{" .. ch .. "}"
        end)
        if t ~= m.text then
          m.text = t
          return m
        end
      end
    end,
  }))
  -- Figures and exercises in document order (one block walk, bottom-up).
  blocks = blocks:walk(guarded({
    Para = function(para)
      if is_figure(para) then
        return figure(ctx, para)
      end
    end,
    Div = function(div)
      for kind in pairs(boxes) do
        if div.classes:includes(kind) then
          return numbered_box(ctx, div, kind)
        end
      end
    end,
    Table = function(tbl)
      return numbered_table(ctx, tbl)
    end,
  }))
  return number_headers(ctx, blocks)
end

-- Cross references: @fig:x, @ch:slug, @ex:x, @sec:x become links.
local ref_prefixes = { "fig:", "ch:", "ex:", "sec:", "tbl:" }

local function is_ref(id)
  for _, p in ipairs(ref_prefixes) do
    if id:sub(1, #p) == p then
      return true
    end
  end
  return false
end

local function resolve_refs(ctx, blocks)
  return pandoc.Blocks(blocks):walk(guarded({
    Cite = function(cite)
      local any = false
      for _, c in ipairs(cite.citations) do
        if is_ref(c.id) then
          any = true
        end
      end
      if not any then
        return nil
      end
      local out = pandoc.List()
      for i, c in ipairs(cite.citations) do
        if not is_ref(c.id) then
          fail(ctx, "'@" .. c.id .. "' is cited together with a cross reference; " ..
               "write citations plainly, e.g. [Vaswani et al., 2017]")
        end
        local r = refs[c.id]
        if not r then
          fail(ctx, "reference '@" .. c.id .. "' points to nothing: no figure, " ..
               "chapter, exercise, table or section has the id '" .. c.id .. "'")
        end
        if i > 1 then
          out:insert(pandoc.Str(","))
          out:insert(pandoc.Space())
        end
        out:extend(c.prefix or {})
        if c.prefix and #c.prefix > 0 then
          out:insert(pandoc.Space())
        end
        out:insert(pandoc.Link({ pandoc.Str(r.text) }, "#" .. c.id))
        out:extend(c.suffix or {})
      end
      return out
    end,
    Link = function(link)
      -- The HTML edition refers to nothing outside itself.
      if FORMAT:match("html") and (link.target:match("^%a[%w+.-]*://") or
                                   link.target:match("^//") or
                                   link.target:match("^mailto:")) then
        local out = pandoc.List(link.content)
        local text = stringify(link.content)
        if text ~= link.target then
          out:insert(pandoc.Space())
          out:insert(pandoc.Str("(" .. link.target .. ")"))
        end
        return pandoc.Span(out, pandoc.Attr("", { "url" }))
      end
    end,
  }))
end

-- ---------------------------------------------------------------------
-- The document
-- ---------------------------------------------------------------------

local function default_chapters()
  return glob("chapters/[0-9][0-9]-*.md")
end

local function load_chapter(file)
  local ctx = { file = file, figures = 0, exercises = 0, is_chapter = true }
  local nn = file:match("([0-9][0-9])%-[^/]*%.md$")
  if nn and tonumber(nn) > 0 then
    ctx.number = tonumber(nn)
    ctx.prefix = ctx.number .. "."
  else
    ctx.prefix = ""
  end
  local text = read_file(file)
  if not text then
    fail(ctx, "cannot read the chapter file")
  end
  local blocks = pandoc.read(text, "markdown").blocks
  return ctx, process_chapter(ctx, blocks)
end

local function build(doc)
  local meta = doc.meta
  if meta.edition then
    edition = stringify(meta.edition)
  end
  if edition ~= "student" and edition ~= "instructor" then
    fail({ file = "the metadata" }, "edition must be student or instructor, not '" .. edition .. "'")
  end
  if meta.builddir then
    builddir = stringify(meta.builddir)
  end
  if meta.sources then
    source_files = {}
    for f in stringify(meta.sources):gmatch("%S+") do
      source_files[#source_files + 1] = f
    end
  end
  index_listings()
  if meta.chapters then
    chapter_files = {}
    for f in stringify(meta.chapters):gmatch("%S+") do
      chapter_files[#chapter_files + 1] = f
    end
  end

  local main_file = (PANDOC_STATE.input_files or {})[1] or "stdin"
  local main_ctx = { file = main_file, figures = 0, exercises = 0, prefix = "" }
  local has_slot = false
  for _, b in ipairs(doc.blocks) do
    if b.t == "Div" and b.classes:includes("chapters") then
      has_slot = true
    end
  end

  local parts = {} -- { ctx, blocks } in order
  if has_slot then
    -- book.md: its own blocks (the preface, references) are not numbered.
    local own = process_chapter(main_ctx, doc.blocks)
    local before, after = pandoc.List(), pandoc.List()
    local target = before
    local chapters = pandoc.List()
    for _, b in ipairs(own) do
      if b.t == "Div" and b.classes:includes("chapters") then
        target = after
      else
        target:insert(b)
      end
    end
    parts[#parts + 1] = { main_ctx, before }
    for _, file in ipairs(chapter_files or default_chapters()) do
      local ok, ctx, blocks = pcall(load_chapter, file)
      if ok then
        parts[#parts + 1] = { ctx, blocks }
      else
        record(ctx)
      end
    end
    parts[#parts + 1] = { main_ctx, after }
  else
    -- A lone chapter (a preview, or a test of the filter).
    local nn = main_file:match("([0-9][0-9])%-[^/]*%.md$")
    if nn and tonumber(nn) > 0 then
      main_ctx.number = tonumber(nn)
      main_ctx.prefix = main_ctx.number .. "."
    end
    parts[1] = { main_ctx, process_chapter(main_ctx, doc.blocks) }
  end

  local blocks = pandoc.List()
  for _, p in ipairs(parts) do
    blocks:extend(resolve_refs(p[1], p[2]))
  end
  if FORMAT:match("epub") then
    -- EPUB's navigation document may not hold MathML: headings' math
    -- becomes text there (dₖ, √dₖ).
    blocks = pandoc.Blocks(blocks):walk({
      Header = function(h)
        h.content = pandoc.Inlines(h.content):walk({
          Math = function(m) return pandoc.Str(math_text(m.text)) end,
        })
        return h
      end,
    })
  end
  doc.blocks = blocks

  local label = edition == "instructor" and "Instructor edition" or "Student edition"
  meta.edition = label
  meta["edition-label"] = pandoc.MetaInlines({ pandoc.Str(label) })
  if FORMAT:match("epub") then
    -- an EPUB's date must be a date: the edition goes in the subtitle
    local sub = meta.subtitle and pandoc.List(meta.subtitle) or pandoc.List()
    if #sub > 0 then
      sub:extend({ pandoc.Str(" ("), pandoc.Str(label), pandoc.Str(")") })
    else
      sub = pandoc.List({ pandoc.Str(label) })
    end
    meta.subtitle = pandoc.MetaInlines(sub)
  elseif not meta.date then
    meta.date = pandoc.MetaInlines({ pandoc.Str(label) })
  end
  doc.meta = meta
  return doc
end

function Pandoc(doc)
  local ok, res = pcall(build, doc)
  if not ok then
    record(res)
  end
  if #errors > 0 then
    local seen, lines = {}, {}
    for _, e in ipairs(errors) do
      if not seen[e] then
        seen[e] = true
        lines[#lines + 1] = e
      end
    end
    error("\n\n" .. table.concat(lines, "\n") .. "\n\nbook: " .. #lines ..
          " error(s); the book was not built.\n", 0)
  end
  return res
end
