#!/usr/bin/env bash
# Installs the independent verifiers the tests check our PDFs and PKI with (Debian/Ubuntu): qpdf, pdfsig
# (poppler-utils), certutil (libnss3-tools), openssl, chromium for the editor and demo browser tests, tinyproxy (the
# real proxy of test/http-proxy.test.ts, started by the test itself), and a real n8n (scripts/install-n8n.sh, cached
# in ~/.cache/singpass-flows). Does nothing when they are all present.
set -euo pipefail
need=()
command -v qpdf >/dev/null || need+=(qpdf)
command -v pdfsig >/dev/null || need+=(poppler-utils)
command -v certutil >/dev/null || need+=(libnss3-tools)
command -v openssl >/dev/null || need+=(openssl)
command -v chromium >/dev/null || need+=(chromium)
# nginx: the round-robin reverse proxy in front of several instances (test/helpers/nginx.ts)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v tinyproxy >/dev/null || need+=(tinyproxy)
# PostgreSQL (the session store, n8n's database in queue mode) and Redis (n8n's queue): the tests start their own
# servers on 127.0.0.1 with temporary data folders (test/helpers/postgres.ts, redis.ts)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -eq 0 ]; then
  echo "test tools present"
else
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
  # The package enables a system-wide tinyproxy service; the test starts its own on 127.0.0.1, so none is left running.
  # The same for the packages' own PostgreSQL and Redis services.
  if command -v systemctl >/dev/null; then
    for s in tinyproxy postgresql redis-server; do
      if [[ " ${need[*]} " == *" $s "* ]]; then $sudo systemctl disable --now "$s" >/dev/null 2>&1 || true; fi
    done
  fi
fi
# A real n8n 2.41 on its own Node 24 for test/n8n, cached outside the repo (minutes once per machine, then instant).
bash "$(dirname "$0")/install-n8n.sh" >/dev/null
