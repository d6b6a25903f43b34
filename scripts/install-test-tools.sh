#!/usr/bin/env bash
# Installs the independent verifiers the tests check our PDFs and PKI with (Debian/Ubuntu): qpdf, pdfsig
# (poppler-utils), certutil (libnss3-tools), openssl, and chromium for the editor and demo browser tests.
# Does nothing when they are all present.
set -euo pipefail
need=()
command -v qpdf >/dev/null || need+=(qpdf)
command -v pdfsig >/dev/null || need+=(poppler-utils)
command -v certutil >/dev/null || need+=(libnss3-tools)
command -v openssl >/dev/null || need+=(openssl)
command -v chromium >/dev/null || need+=(chromium)
[ ${#need[@]} -eq 0 ] && { echo "test tools present"; exit 0; }
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
