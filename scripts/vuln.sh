#!/usr/bin/env bash
# govulncheck over capwin's module, its test module (test/) and hack/images, offline against the Go vulnerability database
# of the pinned golang.org/x/vulndb module (hack/vuln/go.mod): its OSV files are made into a
# database once per version in ~/.cache/capwin/vulndb. Every finding must be explained in
# docs/reliability.md ("Vulnerability scan"), by its ID: a new one fails the scan.
#
#   scripts/vuln.sh        reports in out/vuln-*.txt, exit 1 on an unexplained finding
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
CACHE=${CAPWIN_CACHE:-$HOME/.cache/capwin}

$GO -C hack/vuln build -o bin/ golang.org/x/vuln/cmd/govulncheck golang.org/x/vulndb/cmd/indexdb
version=$($GO -C hack/vuln list -m -f '{{.Version}}' golang.org/x/vulndb)
db="$CACHE/vulndb/$version"
if [[ ! -f "$db/index/modules.json" ]]; then
  osv="$($GO -C hack/vuln list -m -f '{{.Dir}}' golang.org/x/vulndb)/data/osv"
  rm -rf "$db.tmp"
  hack/vuln/bin/indexdb -vulns "$osv" -out "$db.tmp"
  mv "$db.tmp" "$db"
fi

mkdir -p out
scan() { # scan NAME DIR: govulncheck exits 3 when it finds something, anything else is an error
  local rc=0
  (cd "$2" && "$OLDPWD/hack/vuln/bin/govulncheck" -db "file://$db" ./...) >"out/vuln-$1.txt" 2>&1 || rc=$?
  if [[ $rc -ne 0 && $rc -ne 3 ]]; then
    cat "out/vuln-$1.txt" >&2
    echo "vuln: govulncheck of $2 failed (exit $rc)" >&2
    exit 1
  fi
}
scan capwin .
scan test test
scan images hack/images

explained=$(sed -n '/^## Vulnerability scan/,/^## [^V]/p' docs/reliability.md)
found=$(grep -hoE '^Vulnerability #[0-9]+: GO-[0-9]+-[0-9]+' out/vuln-capwin.txt out/vuln-test.txt out/vuln-images.txt | awk '{print $3}' | sort -u)
missing=()
for id in $found; do
  grep -q "$id" <<<"$explained" || missing+=("$id")
done
echo "vuln: database golang.org/x/vulndb@$version; $(wc -w <<<"$found") findings that reach code (out/vuln-capwin.txt, out/vuln-test.txt, out/vuln-images.txt)"
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "vuln: not explained in docs/reliability.md (Vulnerability scan): ${missing[*]}" >&2
  exit 1
fi
echo "vuln: each is explained in docs/reliability.md (Vulnerability scan)"
