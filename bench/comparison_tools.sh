# Sourced by compare_isolation.sh and compare_proxy.sh: installs what the comparisons need if
# missing (bubblewrap, socat, ripgrep from Debian; srt from npm into $build/isolation-tools)
# and sets `tools`, `srt`, `srt_pkg`, and `srt_problem` (non-empty: why srt is unavailable).
# Expects `build` and a `log` function.
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)  # srt's proxy bridges
command -v rg >/dev/null || missing+=(ripgrep)   # srt's deny-path scan
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2 || log "apt-get update failed"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    log "apt-get install ${missing[*]} failed"
fi

tools="$build/isolation-tools"
srt="$tools/node_modules/.bin/srt"
srt_pkg="$tools/node_modules/@anthropic-ai/sandbox-runtime"
srt_problem=""
if [ ! -x "$srt" ]; then
  if command -v npm >/dev/null; then
    log "installing @anthropic-ai/sandbox-runtime into $tools"
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --no-save --loglevel=error \
      @anthropic-ai/sandbox-runtime >&2 ||
      srt_problem="npm install @anthropic-ai/sandbox-runtime failed"
  else
    srt_problem="npm is not installed (srt needs Node.js)"
  fi
fi
if [ -z "$srt_problem" ] && [ ! -x "$srt" ]; then srt_problem="srt not found after npm install"; fi
