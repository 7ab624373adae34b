#!/bin/sh
# One man page from a program's --help, gzipped as Debian wants (gzip -9n).
#   help2man-page.sh OUT.gz SECTION "WHAT IT IS" PROGRAM [SUBCOMMAND] [-- EMULATOR...]
# With SUBCOMMAND the page is PROGRAM-SUBCOMMAND(SECTION), from 'PROGRAM SUBCOMMAND --help'.
# EMULATOR (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu) runs a cross-built PROGRAM.
set -eu
out=$1 section=$2 what=$3 prog=$4
shift 4
sub=""
if [ $# -gt 0 ] && [ "$1" != -- ]; then sub=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = -- ] && shift
emu="$*"
name=$(basename "$prog")${sub:+-$sub}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$($emu "$prog" --version | awk '{ print $NF; exit }')
cat >"$tmp/$name" <<WRAP
#!/bin/sh
if [ "\$1" = --version ]; then echo "$name $version"; exit 0; fi
exec $emu "$prog" $sub "\$@"
WRAP
chmod +x "$tmp/$name"
include=$tmp/see-also
case "$name" in
    irqloop) printf '[SEE ALSO]\n.BR irqloop-calibrate (1),\n.BR irqloop-campaign (1),\n.BR irqloop-check (1),\n.BR irqloop-compare (1),\n.BR irqloop-doctor (1),\n.BR irqloop-explain (1),\n.BR irqloop-export (1),\n.BR irqloop-merge (1),\n.BR irqloop-plot (1),\n.BR irqloop-report (1),\n.BR irqloop-run (1),\n.BR irqloop-tail (1),\n.BR irqloop-verify (1),\n.BR irqloop-watch (1),\n.BR irqloop-worst (1),\n.BR irqloop-rt-access (8),\n.BR irqloop-responder (1).\nThe full documentation is in /usr/share/doc/irqloop/docs.\n' >"$include" ;;
    irqloop-*-access | irqloop-responder) printf '[SEE ALSO]\n.BR irqloop (1).\n' >"$include" ;;
    irqloop-rt) printf '[DESCRIPTION]\nirqloop-rt is the irqloop program under a second name. After\n.BR irqloop-rt-access (8)\nenable, it carries the file capabilities cap_sys_nice and cap_ipc_lock and only root and the members of group irqloop may start it; /usr/bin/irqloop stays runnable by everyone, without them.\n[SEE ALSO]\n.BR irqloop (1),\n.BR irqloop-rt-access (8).\n' >"$include" ;;
    *) printf '[SEE ALSO]\n.BR irqloop (1).\nThe full documentation is in /usr/share/doc/irqloop/docs.\n' >"$include" ;;
esac
help2man --no-info --no-discard-stderr --section="$section" --name="$what" --include="$include" \
    --output="$tmp/page" "$tmp/$name"
gzip -9n <"$tmp/page" >"$out.tmp"
mv "$out.tmp" "$out"
