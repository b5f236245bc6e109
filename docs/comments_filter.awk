# Doxygen's INPUT_FILTER for include/cohort (docs/Doxyfile.in): the headers' comments are plain `//`
# lines, which Doxygen skips; this turns the ones that describe something into `///` blocks, as
# plain text (Doxygen's special characters escaped, so no comment is read as a command or a tag):
#   - the block that opens a file, before `#pragma once`, becomes the file's description;
#   - a block directly above a declaration becomes that declaration's description;
#   - a comment after a declaration's ";" (or an enumerator's ",") on its line describes it ("///<").
# Other comments (above a blank line, a preprocessor line, `}`, a ruler or an access specifier) stay
# plain. Lines are never added or removed, so Doxygen's line numbers are the header's.

# One character at a time: gsub's backslashes differ between awks. "::" is escaped too: Doxygen reads
# "torch::optional" or "::metadata" as a request to link to a name it may not know.
function escape(text,    out, n, c) {
  out = ""
  for (n = 1; n <= length(text); n++) {
    c = substr(text, n, 1)
    if (c == ":" && substr(text, n, 2) == "::") { out = out "\\::"; n++; continue }
    if (index("\\@<>&#%$", c)) out = out "\\"
    out = out c
  }
  return out
}
# A ruler ("// --- Geometry ------") titles a group of declarations, not the next one: left plain.
function is_comment(line) { return line ~ /^[ \t]*\/\/([^\/]|$)/ && line !~ /^[ \t]*\/\/ *---/ }
# "Tensor weight;  // [out, in]" describes the member (or enum value) on its line. Never after a
# "return", a brace or a string (whose "//" may not start a comment).
function trailing(code,    at, head) {
  at = index(code, "  // ")
  if (at == 0) return code
  head = substr(code, 1, at - 1)
  if (head !~ /[;,] *$/ || head ~ /(^|[^A-Za-z0-9_])return([^A-Za-z0-9_]|$)|[{}]|^[ \t]*$/ || head ~ /\/\/|"/) return code
  return head "  ///< " escape(substr(code, at + 5))
}
{ line[NR] = $0 }
# \file names the header as users include it: cohort/nn/linear.h.
FNR == 1 { name = FILENAME; sub(/^.*\/include\//, "", name) }
END {
  i = 1
  while (i <= NR) {
    if (!is_comment(line[i])) { print trailing(line[i]); i++; continue }
    j = i
    while (j <= NR && is_comment(line[j])) j++
    next_line = (j <= NR) ? line[j] : ""
    if (i == 1) {
      kind = "file"
    } else if (next_line ~ /^[ \t]*($|#|}|\/\/|(public|private|protected):)/) {
      kind = "plain"
    } else {
      kind = "doc"
    }
    for (k = i; k < j; k++) {
      if (kind == "plain") { print line[k]; continue }
      match(line[k], /^[ \t]*\/\//)
      indent = substr(line[k], 1, RLENGTH - 2)
      text = escape(substr(line[k], RLENGTH + 1))
      if (kind == "file" && k == i) print indent "/// \\file " name text
      else print indent "///" text
    }
    i = j
  }
}
