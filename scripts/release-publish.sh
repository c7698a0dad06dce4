#!/usr/bin/env bash
# The release workflow's last step (SPEC §10): SHA256SUMS over the archives in dist/, a GitHub
# release with the archives and the sums (gh), and the npm packages from target/npm (built by
# scripts/npm-pack.sh from every target's binary), the per-OS packages before `vibelearn`, which
# names them. With DRY_RUN=1 (what runs here) it checks everything and publishes nothing: the
# sums are verified, `npm publish --dry-run` packs each package, and the gh command is printed.
#
# Usage: scripts/release-publish.sh TAG     e.g. v0.1.0
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:?usage: scripts/release-publish.sh TAG}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ "$tag" = "v$version" ] || { echo "tag $tag does not match Cargo.toml's version $version" >&2; exit 1; }
shopt -s nullglob
archives=(dist/vibelearn-"$version"-*.tar.gz dist/vibelearn-"$version"-*.zip)
((${#archives[@]})) || { echo "no archives for $version in dist/" >&2; exit 1; }
(cd dist && for archive in "${archives[@]}"; do sha256sum -c "${archive#dist/}.sha256" >/dev/null; done)
(cd dist && sha256sum "${archives[@]#dist/}" > SHA256SUMS)
echo "== release-publish: ${#archives[@]} archives, SHA256SUMS:"
cat dist/SHA256SUMS
# What the install scripts read beside the archives: the version, each archive's checksum, and
# the scripts themselves.
echo "$version" > dist/version.txt
cp scripts/install.sh scripts/install.ps1 dist/
assets=("${archives[@]}" "${archives[@]/%/.sha256}" dist/SHA256SUMS dist/version.txt dist/install.sh dist/install.ps1)

packages=(target/npm/vibelearn-*-"$version".tgz)
launcher=target/npm/vibelearn-$version.tgz
[ -f "$launcher" ] && ((${#packages[@]})) || { echo "no npm packages in target/npm (scripts/npm-pack.sh)" >&2; exit 1; }
npm_flags=(--access public)
if [ "${DRY_RUN:-}" = 1 ]; then
    npm_flags+=(--dry-run)
    echo "== release-publish (dry run): gh release create $tag ${assets[*]}"
else
    # npm's own default registry; the token comes from the workflow's secret.
    registry=$(npm config get registry)
    npm config set "//${registry#*://}:_authToken" "${NODE_AUTH_TOKEN:?NODE_AUTH_TOKEN is needed to publish}"
    gh release create "$tag" --title "VibeLearn $version" --generate-notes "${assets[@]}"
fi
for package in "${packages[@]}" "$launcher"; do
    npm publish "${npm_flags[@]}" "$package"
done
