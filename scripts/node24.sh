# Source this file (`. scripts/node24.sh`) to put Node 24 first on PATH when the
# system node is older than 22. Node 24 comes from the npm registry's `node`
# package (it ships the binary), installed once into .tools/.
_ar_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$_ar_major" -lt 22 ]; then
  _ar_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
  _ar_bin="$_ar_root/.tools/node24/node_modules/node/bin"
  if [ ! -x "$_ar_bin/node" ]; then
    npm install --no-save --no-package-lock --prefix "$_ar_root/.tools/node24" node@24 >/dev/null 2>&1 \
      || { echo "could not install node@24 from the npm registry" >&2; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_ar_bin:$PATH"
fi
unset _ar_major _ar_root _ar_bin
