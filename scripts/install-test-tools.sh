#!/usr/bin/env bash
# Installs the independent verifiers the tests check our PDFs and PKI with (Debian/Ubuntu): qpdf, pdfsig
# (poppler-utils), certutil (libnss3-tools), openssl, chromium for the editor and demo browser tests, tinyproxy (the
# real proxy of test/http-proxy.test.ts, started by the test itself), the servers the tests start on 127.0.0.1
# (nginx, postgresql, redis-server, openssh-server), and a real n8n (scripts/install-n8n.sh, cached
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
# openssh-server: the SFTP server the n8n queue-mode test stores signed PDFs on, started by the test itself on
# 127.0.0.1 with its own config and keys (test/helpers/sftp.ts); openssh-client checks that helper
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v sftp >/dev/null || need+=(openssh-client)
if [ ${#need[@]} -eq 0 ]; then
  echo "test tools present"
else
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
  # The package enables a system-wide tinyproxy service; the test starts its own on 127.0.0.1, so none is left running.
  # The same for the packages' own PostgreSQL, Redis and ssh services (an sshd on every interface that the tests did
  # not ask for; only when this script installed it, so never one somebody logs in through). package:service
  if command -v systemctl >/dev/null; then
    for ps in tinyproxy:tinyproxy postgresql:postgresql redis-server:redis-server openssh-server:ssh; do
      p="${ps%%:*}" s="${ps#*:}"
      if [[ " ${need[*]} " == *" $p "* ]]; then $sudo systemctl disable --now "$s" >/dev/null 2>&1 || true; fi
    done
  fi
fi
# A real n8n 2.41 on its own Node 24 for test/n8n, cached outside the repo (minutes once per machine, then instant).
bash "$(dirname "$0")/install-n8n.sh" >/dev/null
