#!/usr/bin/env bash
# Makes assets/fonts/DejaVuSans-WinAnsi.ttf, the font of the visible signature box: DejaVu Sans cut down to the
# characters of PDF's WinAnsiEncoding (what a simple TrueType font can show), without hinting or layout tables.
# Run once by hand (Debian: apt-get install fonttools fonts-dejavu-core); the output is committed, so neither the
# build nor an install needs Python. The licence goes beside it (assets/fonts/LICENSE-DejaVu.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${DEJAVU_SANS:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}
# U+0020–007E, U+00A0–00FF and the characters WinAnsi puts at 0x80–0x9F.
unicodes='U+0020-007E,U+00A0-00FF,U+20AC,U+201A,U+0192,U+201E,U+2026,U+2020,U+2021,U+02C6,U+2030,U+0160,U+2039,U+0152,U+017D,U+2018,U+2019,U+201C,U+201D,U+2022,U+2013,U+2014,U+02DC,U+2122,U+0161,U+203A,U+0153,U+017E,U+0178'
mkdir -p assets/fonts
pyftsubset "$src" --unicodes="$unicodes" --no-hinting --layout-features='' --name-IDs='*' --name-languages='*' \
  --drop-tables+=FFTM,GSUB,GPOS,GDEF,kern --output-file=assets/fonts/DejaVuSans-WinAnsi.ttf
{
  echo 'DejaVu Sans (assets/fonts/DejaVuSans-WinAnsi.ttf is a subset of it, made by scripts/make-signature-font.sh).'
  echo
  sed -n '/^License:/,$p' /usr/share/doc/fonts-dejavu-core/copyright
} > assets/fonts/LICENSE-DejaVu.txt
