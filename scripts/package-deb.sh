#!/usr/bin/env bash
# Builds the Debian package of fsynclab (docs/INSTALL.md, "A Debian package"):
#   1. the release binary (cargo build --release -p fsynclab --locked),
#   2. with that binary, the man pages (fsynclab(1) and one per subcommand, gzipped) and the
#      bash, zsh and fish completions, into <target dir>/release/deb-assets/,
#   3. cargo deb --no-build, which packs them with the desktop entry and the icons as listed in
#      crates/fsynclab/Cargo.toml, [package.metadata.deb].
# Needs cargo-deb (`cargo install cargo-deb`) and dpkg-dev (dpkg-shlibdeps, for `depends =
# "$auto"`). Honours CARGO_TARGET_DIR. Prints the path of the .deb on its last line.
# Extra arguments go to cargo deb (e.g. --deb-revision 2).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo-deb >/dev/null ||
  { echo "needs cargo-deb: cargo install cargo-deb" >&2; exit 2; }
command -v dpkg-shlibdeps >/dev/null ||
  { echo "needs dpkg-shlibdeps: apt-get install dpkg-dev" >&2; exit 2; }

cargo build --release -p fsynclab --locked
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bin=$target_dir/release/fsynclab
out=$target_dir/release/deb-assets
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"

# One page per subcommand, named as clap_mangen titles them (fsynclab-run(1)...): the
# subcommands are read from --help, so a new one gets its page without editing this list.
"$bin" man | gzip -9n >"$out/man/fsynclab.1.gz"
subcommands=$("$bin" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | grep -vx help)
for sub in $subcommands; do
  "$bin" man "$sub" | gzip -9n >"$out/man/fsynclab-$sub.1.gz"
done
"$bin" completions bash >"$out/completions/fsynclab.bash"
"$bin" completions zsh >"$out/completions/_fsynclab"
"$bin" completions fish >"$out/completions/fsynclab.fish"
echo "deb-assets: $(ls "$out/man" | wc -l) man pages, 3 completion scripts in $out" >&2

# --no-strip: the package carries the binary exactly as the release profile builds it (debug
# info stripped, symbols kept so a backtrace names its functions).
cargo deb -p fsynclab --no-build --no-strip --locked "$@"
