#!/usr/bin/env bash
# .ci/debian-mirror on sample apt configurations (one-line sources.list, deb822 .sources, an
# inline key, a disabled stanza, a machine that has backports already, one with no usable entry,
# another release): the backports entry must come from the mirror the machine already names.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
samples="$src/tests/packaging/apt-sources"
fails=0
passes=0
check() { # name, expected, actual
  if [[ "$2" == "$3" ]]; then
    passes=$((passes + 1))
  else
    fails=$((fails + 1))
    printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
  fi
}
mirror() { bash "$src/.ci/debian-mirror" --root "$samples/$1" "${@:2}" 2>&1; echo "rc=$?"; }

check one-line-uri "http://localhost:3142/debian
rc=0" "$(mirror one-line)"
check one-line-backports "Types: deb
URIs: http://localhost:3142/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/lab-archive.gpg
rc=0" "$(mirror one-line --backports)"
# irqloop's own file (written by .ci/setup) does not count as backports being configured.
check one-line-has "rc=1" "$(mirror one-line --has-backports)"

check deb822-uri "file:/srv/lab-mirror/debian
rc=0" "$(mirror deb822)"
check deb822-backports "Types: deb
URIs: file:/srv/lab-mirror/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
rc=0" "$(mirror deb822 --backports)"

check inline-key "Types: deb
URIs: mirror+file:/etc/apt/lab-mirrors.txt
Suites: bookworm-backports
Components: main
Signed-By: 
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 bWFkZSB1cCBmb3IgYSB0ZXN0
 -----END PGP PUBLIC KEY BLOCK-----
rc=0" "$(mirror inline-key --backports)"

check has-backports "rc=0" "$(mirror has-backports --has-backports)"
check none "irqloop: debian-mirror: no enabled 'deb' entry serves 'bookworm' main under '$samples/none/etc/apt' (add your Debian mirror to apt's sources)
rc=1" "$(mirror none)"
check trixie "file:/srv/lab-mirror/debian
rc=0" "$(mirror trixie)"
check trixie-suite "Types: deb
URIs: file:/srv/lab-mirror/debian
Suites: trixie-backports
Components: main
rc=0" "$(mirror trixie --backports)"
check bad-argument "rc=2" "$(mirror one-line --bogus 2>/dev/null | tail -1)"
# Not one archive host name anywhere in the tree (labs use their own mirrors and proxies).
hosts=$(grep -rnIE --exclude-dir='build*' --exclude-dir=.git --exclude-dir=out \
  '(deb|ftp|security|archive|ports)\.(debian|ubuntu)\.(org|com)|snapshot\.debian|debian\.map\.fastly' "$src")
check no-archive-host "" "$hosts"

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
