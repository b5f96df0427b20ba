#!/usr/bin/env bash
# Installs the Debian packages the project needs, when they are missing:
#   liblmdb-dev     LMDB, the storage engine (the CLMDB system library)
#   libssl-dev      libcrypto's SHA-256 for the event chain (the CCrypto system library, linked statically)
#   libyaml-dev     libyaml's parser for Markdown front matter (the CYAML system library, linked statically)
#   libstemmer-dev  Snowball stemmers for search words (the CStemmer system library, linked statically)
#   libsqlite3-dev  SQLite, only the benchmark's FTS5 peer links it
#   sqlite3         the sqlite3 CLI, the peer of the process-start benchmark
#   patch           used by the tests that check our diffs apply like GNU diff's
#   zsh             lets the completion tests run the zsh script (bash is always there)
#   fish            lets the completion tests run the fish script
#   libpq-dev       libpq, PostgreSQL's client library, for the remote log of sync (the CLibPQ system library)
#   postgresql      the server the remote log's tests start in a throwaway cluster (initdb, pg_ctl)
set -euo pipefail
need=()
for pkg in liblmdb-dev libssl-dev libyaml-dev libstemmer-dev libsqlite3-dev sqlite3 patch zsh fish libpq-dev postgresql; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if ((${#need[@]})); then
    echo "installing: ${need[*]}" >&2
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
