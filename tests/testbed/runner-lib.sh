# SPDX-License-Identifier: MIT
#
# What the two QEMU testbed runners share, sourced on the host by run-testbed.sh and
# raspi3b/run-raspi3b.sh. The runner defines die, usage and all_scenarios, and sets list,
# build_dir, results, cache, verdict and globs from its options, before calling these.
# shellcheck shell=bash disable=SC2154 # those globals are the runner's

# runner_start TAG [host]: --list, the build folder, the default results and cache folders
# (BUILD/TAG-results, BUILD/TAG-cache), and --verdict: the CTest face of one scenario of the
# last boot (a fixture runs the boot), with its host check's log after the guest's when "host"
# is given (the runner has host checks). --list and --verdict exit here.
runner_start()
{
    local tag=$1 host=${2:-} d v
    if [[ $list == 1 ]]; then
        all_scenarios
        exit 0
    fi
    [[ -n $build_dir ]] || { usage >&2; die "--build is required"; }
    build_dir=$(cd "$build_dir" && pwd) || die "no build folder '$build_dir'"
    results=${results:-$build_dir/$tag-results}
    cache=${cache:-$build_dir/$tag-cache}
    [[ -n $verdict ]] || return 0
    d=$results/$verdict
    if [[ ! -f $d/verdict ]]; then
        echo "$tag: scenario '$verdict' has no result: the guest did not run it" \
            "(see $results/serial.log)"
        exit 1
    fi
    cat "$d/log" 2>/dev/null || true
    [[ -n $host && -f $d/host.log ]] && { echo "--- host check"; cat "$d/host.log"; }
    read -r v <"$d/verdict"
    echo "$tag: scenario '$verdict': $v"
    [[ $v == pass ]] && exit 0
    [[ $v == skip ]] && exit 4
    exit 1
}

# runner_selected_scenarios: the scenarios (all_scenarios) that match one of $globs
# (GLOB[,GLOB...]), in name order.
runner_selected_scenarios()
{
    local n g
    local -a patterns
    IFS=, read -ra patterns <<<"$globs"
    for n in $(all_scenarios); do
        for g in "${patterns[@]}"; do
            # shellcheck disable=SC2053 # glob match on purpose
            if [[ $n == $g ]]; then
                echo "$n"
                break
            fi
        done
    done
}

# runner_download DIR PKG[=VERSION]: apt-get download PKG into DIR, refreshing the apt lists
# once when the first try fails.
runner_download()
{
    (cd "$1" && apt-get download -qq "$2" >/dev/null 2>&1) || {
        apt-get update -qq >/dev/null 2>&1 || true
        (cd "$1" && apt-get download -qq "$2" >/dev/null) || die "cannot download $2"
    }
}

# runner_pack_initramfs TAG ROOT OUT: the guest's users, the init and scenarios executable,
# ROOT packed into the gzipped cpio OUT, and its size said.
runner_pack_initramfs()
{
    local tag=$1 root=$2 out=$3
    echo 'root:x:0:0::/root:/bin/sh' >"$root/etc/passwd"
    echo 'tbuser:x:1000:1000::/tmp:/bin/sh' >>"$root/etc/passwd"
    printf 'root:x:0:\ntbuser:x:1000:\n' >"$root/etc/group"
    chmod 0755 "$root/init" "$root"/testbed/scenarios/*.sh
    (cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
    echo "$tag: initramfs $(du -h "$out" | cut -f1)"
}
