#!/usr/bin/env bash
# make release: cross-builds agent-ls for every supported platform into
# dist/ as agent-ls_VERSION_OS_ARCH.tar.gz (.zip for Windows), each holding
# the binary, LICENSE, README.md and CHANGELOG.md, with the version and
# revision stamped (`agent-ls version` prints them), then dist/SHA256SUMS
# over every archive; the VS Code extension (make vsix) goes beside them
# when npm is available.
#   VERSION=v0.9.0 make release   (default: the exact git tag, else 0.0.0-dev+SHORTSHA)
#   PLATFORMS="linux/amd64" DIST=/tmp/d NO_VSIX=1 (a subset, elsewhere, without the vsix)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || rev="$rev+dirty"
version=${VERSION:-$(git describe --tags --exact-match 2>/dev/null || echo "0.0.0-dev+$(git rev-parse --short HEAD 2>/dev/null || echo unknown)")}
platforms=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64"}
dist=${DIST:-dist}
rm -rf "$dist"
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name="agent-ls_${version}_${os}_${arch}"
	dir="$work/$name"
	mkdir -p "$dir"
	exe=agent-ls
	[ "$os" = windows ] && exe=agent-ls.exe
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath -buildvcs=false \
		-ldflags "-s -w -X main.version=$version -X main.revision=$rev" -o "$dir/$exe" ./cmd/agent-ls
	cp LICENSE README.md CHANGELOG.md "$dir/"
	if [ "$os" = windows ]; then
		out="$dist/$name.zip"
		if command -v zip >/dev/null 2>&1; then
			(cd "$work" && zip -qr "$out" "$name")
		else
			(cd "$work" && python3 -m zipfile -c "$out" "$name")
		fi
	else
		tar -C "$work" -czf "$dist/$name.tar.gz" "$name"
	fi
	echo "$dist/$name: $os/$arch"
done
if command -v npm >/dev/null 2>&1 && [ -z "${NO_VSIX:-}" ]; then
	(cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error >/dev/null && npm run --silent package >/dev/null) &&
		cp editors/vscode/agent-ls.vsix "$dist/agent-ls_${version}.vsix" && echo "$dist/agent-ls_${version}.vsix"
fi
(cd "$dist" && sha256sum -- * >SHA256SUMS)
echo "$dist/SHA256SUMS"
