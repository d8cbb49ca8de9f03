# Sourced by the scripts that run the README's steps as written (external_crate.sh,
# your_kernel.sh): `readme_block KIND NAME` prints the fenced block after the marker
# `<!-- KIND: NAME -->` in README.md, with /path/to/reduction replaced by this checkout ($repo).
readme_block() {
  awk -v want="<!-- $1: $2 -->" '
    $0 == want { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$repo/README.md" | sed "s|/path/to/reduction|$repo|g"
}
