#!/usr/bin/env bash
# `npm run image`: builds Corral's container image without pulling a base image — the root filesystem is assembled
# from Debian packages (mmdebstrap), the project's pinned Node runtime (the `node` npm package), the production
# node_modules (`npm ci --omit=dev`) and the built UI (.next), then imported with podman. The layout is the
# Containerfile's: /app, /usr/local/bin/node, uid 10001, `tini -- node bin/corral.mjs`, NODE_ENV=production.
#
#   scripts/image.sh [--tag corral:0.1.0] [--rootfs-only DIR | --base-only]
#
# --rootfs-only DIR  stop after assembling the root filesystem into DIR (no podman needed; tests run it under chroot)
# --base-only        only make sure the Debian base is cached (CI runs this in the background while npm ci, the
#                    type check and the lint run; a later run waits for it through the cache's lock)
# Caches (outside the repository, $CORRAL_IMAGE_CACHE or ~/.cache/corral-image): the Debian base tarball keyed by
# suite + package list, and the production node_modules keyed by package-lock.json.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tag="corral:$(node -p "require('$root/package.json').version" 2>/dev/null || echo latest)"
rootfs_only=''
base_only=false
while (($#)); do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --rootfs-only) rootfs_only="$2"; shift 2 ;;
    --base-only) base_only=true; shift ;;
    *) echo "usage: scripts/image.sh [--tag NAME:TAG] [--rootfs-only DIR | --base-only]" >&2; exit 2 ;;
  esac
done

# Keep in step with the Containerfile's runtime stage.
suite=bookworm
packages=(ca-certificates libstdc++6 qemu-utils tini)
uid=10001
cache="${CORRAL_IMAGE_CACHE:-$HOME/.cache/corral-image}"
mkdir -p "$cache"
say() { echo "[image] $*" >&2; }

# 1. The Debian base (essential + packages), built once per suite and package list. One builder at a time: a run
# that finds another assembling it (CI's background --base-only) waits for that one instead of starting over.
base_key="$(printf '%s %s' "$suite" "${packages[*]}" | sha256sum | cut -c1-16)"
base="$cache/base-$suite-$base_key.tar"
exec 9>"$cache/base-$suite-$base_key.lock"
if [[ ! -s "$base" ]] && ! flock -n 9; then
  say "waiting for the Debian base another run is assembling"
  flock 9
fi
flock 9
if [[ ! -s "$base" ]]; then
  command -v mmdebstrap >/dev/null || { say "mmdebstrap is missing (apt-get install mmdebstrap)"; exit 1; }
  say "assembling the Debian $suite base (${packages[*]}) into $base"
  mmdebstrap --quiet --format=tar --variant=essential --include="$(IFS=,; echo "${packages[*]}")" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    "$suite" "$base.partial"
  mv "$base.partial" "$base"
fi
flock -u 9
if $base_only; then
  say "Debian base ready: $base ($(du -h "$base" | cut -f1))"
  exit 0
fi

# 2. The built UI: the checkout's .next, built first when missing (the same two-phase build the e2e setup runs).
if [[ ! -f "$root/.next/BUILD_ID" ]]; then
  say "building the UI (next build)"
  (cd "$root" && NODE_ENV=production node_modules/.bin/next build --experimental-build-mode compile &&
    NODE_ENV=production node_modules/.bin/next build --experimental-build-mode generate)
fi

# 3. Production node_modules, once per package-lock.json: derived from the checkout's installed node_modules when
# it matches the lock (hard links, `npm prune --omit=dev` offline, then a real copy so nothing in the cache or the
# image shares an inode with the checkout: ~20 s, no network), else `npm ci --omit=dev` (minutes on a cold cache).
lock_key="$(sha256sum "$root/package-lock.json" | cut -c1-16)"
modules="$cache/node_modules-$lock_key"
if [[ ! -d "$modules" ]]; then
  stage="$(mktemp -d "$cache/npm-XXXXXX")"
  cp "$root/package.json" "$root/package-lock.json" "$stage/"
  derived=false
  if [[ -d "$root/node_modules/next" ]]; then
    say "deriving production dependencies from node_modules (npm prune --omit=dev, offline)"
    mkdir "$stage/node_modules"
    # The packages, their bin links and npm's record of them; not the tools' caches (.vite, .vitest-cache, …).
    for entry in "$root"/node_modules/* "$root/node_modules/.bin"; do
      cp -al "$entry" "$stage/node_modules/" 2>/dev/null || cp -a "$entry" "$stage/node_modules/"
    done
    # npm rewrites its record of the tree in place: a copy, never a link (or the checkout's would be pruned too).
    if [[ -f "$root/node_modules/.package-lock.json" ]]; then cp "$root/node_modules/.package-lock.json" "$stage/node_modules/"; fi
    if (cd "$stage" && npm prune --omit=dev --ignore-scripts --offline --no-audit --no-fund --loglevel=error >&2 &&
      npm ls --omit=dev --all --offline >/dev/null 2>&1); then
      find "$stage/node_modules" -mindepth 1 -maxdepth 2 -type d -empty -delete
      cp -a "$stage/node_modules" "$stage/production"
      rm -rf "$stage/node_modules"
      mv "$stage/production" "$stage/node_modules"
      derived=true
    else
      say "node_modules does not match package-lock.json; installing instead"
      rm -rf "$stage/node_modules"
    fi
  fi
  if ! $derived; then
    say "installing production dependencies (npm ci --omit=dev)"
    (cd "$stage" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  fi
  mv "$stage/node_modules" "$modules"
  rm -rf "$stage"
fi

# 4. The root filesystem.
if [[ -n "$rootfs_only" ]]; then
  fs="$rootfs_only"
  rm -rf "$fs"
else
  fs="$(mktemp -d "$cache/rootfs-XXXXXX")"
  trap 'rm -rf "$fs"' EXIT
fi
mkdir -p "$fs"
say "assembling the root filesystem in $fs"
tar -C "$fs" -xf "$base"
node_bin="$(readlink -f "$root/node_modules/node/bin/node")"
install -m 0755 "$node_bin" "$fs/usr/local/bin/node"
mkdir -p "$fs/app"
(cd "$root" && git ls-files -z -- bin src server.ts package.json package-lock.json tsconfig.json next.config.mjs |
  grep -zv -e '\.test\.ts$' -e '\.test\.tsx$' | xargs -0 cp --parents -t "$fs/app")
# Hard links when the root filesystem is on the cache's file system (nothing in the image writes to them).
cp -al "$modules" "$fs/app/node_modules" 2>/dev/null || cp -a "$modules" "$fs/app/node_modules"
mkdir -p "$fs/app/.next"
(cd "$root/.next" && tar -c --exclude=./cache --exclude=./trace --exclude=./dev --exclude=./lock . ) | tar -C "$fs/app/.next" -x
mkdir -p "$fs/app/.next/cache"
chown -R 0:0 "$fs/app"
chown "$uid:$uid" "$fs/app/.next/cache"
echo "corral:x:$uid:$uid:Corral:/app:/usr/sbin/nologin" >>"$fs/etc/passwd"
echo "corral:x:$uid:" >>"$fs/etc/group"
chmod 1777 "$fs/tmp"

if [[ -n "$rootfs_only" ]]; then
  say "root filesystem ready: $fs ($(du -sh "$fs" | cut -f1))"
  exit 0
fi

# 5. The image.
command -v podman >/dev/null || { say "podman is missing (apt-get install podman)"; exit 1; }
tar -C "$fs" -c . | podman import \
  --change 'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/node", "bin/corral.mjs"]' \
  --change 'CMD ["web", "--port", "8006"]' \
  --change "USER $uid:$uid" \
  --change 'WORKDIR /app' \
  --change 'ENV NODE_ENV=production' \
  --change 'EXPOSE 8006' \
  - "$tag" >/dev/null
say "built $tag ($(podman image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
