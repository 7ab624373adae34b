#!/usr/bin/env bash
# The amd64 packages in a clean Debian 12 root (mmdebstrap minbase + man-db):
#  - apt installs irqloop and irqloop-responder with what their Depends pull in (nothing else);
#  - 'irqloop run --samples 10K' and 'irqloop report' work from /usr/bin, 'man irqloop' shows
#    the page, every packaged man page renders; a --load-cmd load starts and stops under its
#    guard (/usr/libexec/irqloop/irqloop-load-guard), for root's irqloop and alice's irqloop-rt;
#  - least privilege: after 'irqloop-rt-access enable', a user in group irqloop (not root) runs
#    'irqloop-rt run' and the run stores the real-time settings as obtained; with --rawio, a
#    raw parport base that /proc/ioports does not list, and check=no, are refused before any
#    ioperm (strace counts them); the results and
#    lock files are the user's, mode 0644 at most; a user outside the group cannot start
#    irqloop-rt, but runs /usr/bin/irqloop (no capabilities on it: run without real-time
#    settings, report);
#  - purge (and autoremove of what was pulled in) leaves no file behind, no group, no override.
# Spins SCHED_FIFO threads: run alone (CTest RUN_SERIAL; by hand: flock /work/rt.lock).
set -uo pipefail
. "$(dirname "$0")/clean-root-lib.sh"
need_root_tools
find_debs
enter_root install-test

mkdir -p "$root/tmp/debs"
cp "$debs_logger" "$debs_responder" "$root/tmp/debs/"
before=$(snapshot)
groups_before=$(cut -d: -f1 "$root/etc/group" | sort)

say "== apt-get install ./${debs_logger##*/} ./${debs_responder##*/}"
in_root apt-get install -y -q --no-install-recommends /tmp/debs/"${debs_logger##*/}" \
  /tmp/debs/"${debs_responder##*/}" >"$cache/install-test-apt.log" 2>&1 ||
  { tail -30 "$cache/install-test-apt.log"; fail "apt-get install of the packages failed"; }
grep -E '^(Setting up|Unpacking) ' "$cache/install-test-apt.log" | sed 's/^/  /' | grep -E 'irqloop|libgpiod|adduser|libcap2-bin' || true

[[ $(in_root sh -c 'command -v irqloop') == /usr/bin/irqloop ]] || fail "irqloop is not /usr/bin/irqloop"
[[ $(in_root sh -c 'command -v irqloop-responder') == /usr/bin/irqloop-responder ]] ||
  fail "irqloop-responder is not /usr/bin/irqloop-responder"
in_root irqloop --version || fail "irqloop --version"
in_root irqloop-responder --version || fail "irqloop-responder --version"

say "== irqloop run --samples 10K (root, sim board), with a --load-cmd load under its guard"
in_root irqloop run --samples 10K --interval 100us --label install-test --db /root/install.db \
  --progress none --load-cmd 'sleep 60' --load-required >"$cache/install-test-run.txt" 2>&1 ||
  { cat "$cache/install-test-run.txt"; fail "irqloop run as root"; }
cat "$cache/install-test-run.txt"
# The guard came in the package, in /usr/libexec/irqloop, and was found from /usr/bin.
grep -q 'load: killed by SIGTERM' "$cache/install-test-run.txt" ||
  fail "the --load-cmd load was not started and stopped (irqloop-load-guard not found?)"
say "== irqloop report --last"
in_root irqloop report --db /root/install.db --last >"$cache/install-test-report.txt" ||
  fail "irqloop report"
head -25 "$cache/install-test-report.txt"
grep -q 'install-test' "$cache/install-test-report.txt" || fail "the report does not show the run's label"

say "== man irqloop"
in_root sh -c 'MANWIDTH=80 man -P cat irqloop 2>&1' >"$cache/install-test-man.txt" || fail "man irqloop"
head -12 "$cache/install-test-man.txt"
grep -q '^IRQLOOP(1)' "$cache/install-test-man.txt" || fail "man irqloop did not show the irqloop(1) page"
for page in $(in_root dpkg -L irqloop irqloop-responder | grep '/man/man./.*\.gz$'); do
  name=${page##*/}; name=${name%.gz}
  out=$(in_root sh -c "MANWIDTH=80 man -P cat ${name%.*} 2>&1") || fail "man ${name%.*}"
  grep -q 'NAME' <<<"$out" || fail "man ${name%.*} shows no NAME section"
done

say "== least privilege: irqloop-rt-access enable; alice in group irqloop, bob not"
in_root irqloop-rt-access enable || fail "irqloop-rt-access enable"
in_root irqloop-rt-access status
in_root useradd --create-home --shell /bin/sh alice || fail "useradd alice"
in_root useradd --create-home --shell /bin/sh bob || fail "useradd bob"
in_root adduser --quiet alice irqloop || fail "adduser alice irqloop"
# What udev does with the package's rule at boot (no udev daemon in a chroot): the GROUP and
# MODE of the cpu_dma_latency rule, read from the installed rules file, on our own node.
rule=$(grep -E '^[^#]*KERNEL=="cpu_dma_latency"' "$root/lib/udev/rules.d/60-irqloop.rules") ||
  fail "no cpu_dma_latency rule in /lib/udev/rules.d/60-irqloop.rules"
group=$(sed -n 's/.*GROUP="\([^"]*\)".*/\1/p' <<<"$rule")
mode=$(sed -n 's/.*MODE="\([^"]*\)".*/\1/p' <<<"$rule")
[[ $group == irqloop && -n $mode ]] || fail "the cpu_dma_latency rule gives group '$group' mode '$mode'"
if [[ -c $root/dev/cpu_dma_latency ]]; then
  in_root chgrp "$group" /dev/cpu_dma_latency && in_root chmod "$mode" /dev/cpu_dma_latency
fi
in_root runuser -u alice -- sh -c 'cd && id && irqloop-rt run --samples 10K --interval 100us \
  --label alice-rt --db rt.db --progress none --load-cmd "sleep 60" --load-required' \
  >"$cache/install-test-alice.txt" 2>&1
rc=$?
cat "$cache/install-test-alice.txt"
[[ $rc -eq 0 ]] || fail "alice's run failed (exit $rc)"
# irqloop-rt has file capabilities (secure_getenv ignores IRQLOOP_LOAD_GUARD): the guard is
# found in ../libexec/irqloop from /usr/bin.
grep -q 'load: killed by SIGTERM' "$cache/install-test-alice.txt" ||
  fail "alice's --load-cmd load was not started and stopped under irqloop-rt"
# The report's 'rt settings' row, whole: a refused setting reads e.g. 'sched=other(fifo refused)'.
rt_row() { sed -n 's/^rt settings  *//p' | head -1; }
settings=$(in_root runuser -u alice -- sh -c 'cd && irqloop report --db rt.db --last' | rt_row)
say "alice's run stored the real-time settings: $settings"
[[ $settings == *sched=fifo:80* && $settings == *mlockall=yes* ]] ||
  fail "alice's run does not report SCHED_FIFO and mlockall as obtained: '$settings'"
if [[ -c $root/dev/cpu_dma_latency ]]; then
  [[ $settings == *cpu_dma_latency=0* ]] || fail "alice's run did not hold cpu_dma_latency: '$settings'"
fi
for f in rt.db rt.db-lock; do
  p=$root/home/alice/$f
  [[ -e $p ]] || { [[ $f == *.lock ]] && continue; fail "alice's $f is missing"; }
  owner=$(in_root stat -c %U "/home/alice/$f"); perm=$(stat -c %a "$p")
  say "  /home/alice/$f: $owner $perm"
  [[ $owner == alice ]] || fail "$f belongs to $owner, not alice"
  (( (8#$perm & 8#022) == 0 )) || fail "$f is group- or world-writable ($perm)"
done
[[ -z $(find "$root/usr" -perm /6000 -name 'irqloop*') ]] || fail "a setuid or setgid irqloop file"
out=$(in_root runuser -u bob -- irqloop-rt --version 2>&1) && fail "bob, outside group irqloop, ran irqloop-rt: $out"
say "bob (not in group irqloop): $out"
# /usr/bin/irqloop is untouched by the opt-in: everyone runs it, without capabilities.
plain=$(in_root stat -c '%U:%G %a' /usr/bin/irqloop)
[[ $plain == 'root:root 755' ]] || fail "/usr/bin/irqloop is $plain after enable, not root:root 755"
[[ -z $(in_root getcap /usr/bin/irqloop) ]] || fail "/usr/bin/irqloop has capabilities: $(in_root getcap /usr/bin/irqloop)"
in_root runuser -u bob -- sh -c 'cd && irqloop run --samples 2K --interval 100us --label bob \
  --db bob.db --progress none' >"$cache/install-test-bob.txt" 2>&1 ||
  { cat "$cache/install-test-bob.txt"; fail "bob cannot run /usr/bin/irqloop"; }
bob_settings=$(in_root runuser -u bob -- sh -c 'cd && irqloop report --db bob.db --last' | rt_row)
say "bob ran /usr/bin/irqloop and its report: $bob_settings"
[[ $bob_settings == *sched=other* ]] || fail "bob's run got real-time settings without the group: '$bob_settings'"
say "== --rawio: alice's irqloop-rt reaches only the ports /proc/ioports lists as parportN"
# With cap_sys_rawio on irqloop-rt, a raw base that is not a listed parallel port (0xcf8, the
# PCI configuration address) and check=no are refused (exit 2) before any ioperm. strace, run
# from the host as root (a tracer with CAP_SYS_PTRACE keeps the file capabilities), counts the
# ioperm calls; the same command as root, who is not gated, shows that the count sees them.
in_root irqloop-rt-access enable --rawio >/dev/null || fail "irqloop-rt-access enable --rawio"
say "irqloop-rt: $(in_root getcap /usr/bin/irqloop-rt)"
in_root getcap /usr/bin/irqloop-rt | grep -q cap_sys_rawio || fail "--rawio gave irqloop-rt no cap_sys_rawio"
traced() { # traced USER SPEC: the run's output to rawio.txt, its ioperm calls to rawio-strace.txt
  strace -f -qq -o "$cache/rawio-strace.txt" -e trace=ioperm,iopl \
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    runuser -u "$1" -- sh -c "cd && $2" >"$cache/rawio.txt" 2>&1
}
if ! command -v strace >/dev/null; then
  fail "strace is missing (bash .ci/setup test installs it)"
fi
for spec in parport:base=0xcf8 parport:base=0x378,check=no; do
  rc=0; traced alice "irqloop-rt run --no-db --samples 10 --hw $spec" || rc=$?
  calls=$(grep -c -E 'ioperm\(|iopl\(' "$cache/rawio-strace.txt" || true)
  say "alice: irqloop-rt run --hw $spec: exit $rc, $calls ioperm/iopl calls: $(grep 'irqloop:' "$cache/rawio.txt" | head -n1)"
  [[ $rc -eq 2 ]] || { cat "$cache/rawio.txt"; fail "alice's irqloop-rt --hw $spec ended with $rc, not 2"; }
  [[ $calls -eq 0 ]] || { cat "$cache/rawio-strace.txt"; fail "alice's irqloop-rt --hw $spec called ioperm"; }
  grep -q 'dev=/dev/parportN' "$cache/rawio.txt" || { cat "$cache/rawio.txt"; fail "the refusal does not name dev=/dev/parportN"; }
done
rc=0; traced root "irqloop run --no-db --samples 10 --timeout 10ms --hw parport:base=0x378" || rc=$?
calls=$(grep -c -E 'ioperm\(|iopl\(' "$cache/rawio-strace.txt" || true)
say "root (not gated): irqloop run --hw parport:base=0x378: exit $rc, $calls ioperm/iopl calls: $(head -n1 "$cache/rawio-strace.txt")"
[[ $calls -ge 1 ]] || { cat "$cache/rawio.txt" "$cache/rawio-strace.txt"; fail "strace saw no ioperm from root's ungated run: the count above proves nothing"; }
in_root irqloop-rt-access enable >/dev/null || fail "irqloop-rt-access enable (without --rawio again)"
in_root getcap /usr/bin/irqloop-rt | grep -q cap_sys_rawio && fail "enable without --rawio kept cap_sys_rawio"

say "== irqloop-rt-access disable"
in_root irqloop-rt-access disable || fail "irqloop-rt-access disable"
in_root runuser -u bob -- irqloop-rt --version || fail "after disable, bob cannot run irqloop-rt"
in_root irqloop-rt-access enable >/dev/null || fail "irqloop-rt-access enable (again, for purge)"

say "== purge, autoremove"
in_root userdel -r alice 2>/dev/null
in_root userdel -r bob 2>/dev/null
rm -rf "$root/tmp/debs" "$root/root/install.db" "$root/root/install.db-lock" "$root/root/install.db-wal" \
  "$root/root/install.db-shm"
in_root apt-get purge -y -q irqloop irqloop-responder >"$cache/install-test-purge.log" 2>&1 ||
  { tail -20 "$cache/install-test-purge.log"; fail "apt-get purge"; }
in_root apt-get autoremove --purge -y -q -o APT::AutoRemove::RecommendsImportant=false -o APT::AutoRemove::SuggestsImportant=false >>"$cache/install-test-purge.log" 2>&1 ||
  { tail -20 "$cache/install-test-purge.log"; fail "apt-get autoremove --purge"; }
after=$(snapshot)
left=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')
groups_after=$(cut -d: -f1 "$root/etc/group" | sort)
in_root dpkg-statoverride --list | grep irqloop >/dev/null && fail "a dpkg-statoverride for irqloop is left"
[[ $groups_before == "$groups_after" ]] ||
  fail "groups differ after purge: $(diff <(echo "$groups_before") <(echo "$groups_after") | grep '^[<>]' | tr '\n' ' ')"
# /etc/group- and friends are the backups adduser/groupdel keep of files that are back as before.
left=$(grep -vE '^[<>] \./etc/(group|gshadow|passwd|shadow|subuid|subgid)-$' <<<"$left")
[[ -z $left ]] || fail "purge left these changes:
$left"
say "purge left nothing: no file, group or override (apt/dpkg bookkeeping aside)"
echo "1 passed, 0 failed"
