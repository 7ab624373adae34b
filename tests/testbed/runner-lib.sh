# SPDX-License-Identifier: MIT
#
# What the two QEMU testbed runners share, sourced on the host by run-testbed.sh and
# raspi3b/run-raspi3b.sh. The runner defines die, usage, all_scenarios and runner_own_option;
# runner_options sets list, build_dir, results, cache, verdict, globs, boot_timeout and
# fixture from its options.
# shellcheck shell=bash disable=SC2154,SC2034 # those globals are the runner's

# The root of the source tree (this file is tests/testbed/runner-lib.sh).
src_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

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

# runner_select_scenarios: scenarios=(the scenarios, all_scenarios, that match one of $globs
# (GLOB[,GLOB...]), in name order); none is refused (status 2).
runner_select_scenarios()
{
    mapfile -t scenarios < <(runner_matching_scenarios)
    [[ ${#scenarios[@]} -gt 0 ]] || die "no scenario matches '$globs' (try --list)"
}

# runner_matching_scenarios: prints them.
runner_matching_scenarios()
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

# runner_find_program NAME: the shallowest executable file NAME in the build folder, or nothing.
# Build trees nested in it (.ci/package's package-ARCH, an arm64 cross build) hold programs of
# the same name, possibly for another architecture, hence the shallowest. The packaging tests'
# Debian roots (BUILD/clean-root) and the runner's cache are not searched: a root may be in use
# by a test running beside the runner, with its /proc mounted, where find meets unreadable
# entries and fails (CI of stop 36 lost the testbed boot to this).
runner_find_program()
{
    find "$build_dir" \( -path "$build_dir/clean-root" -o -path "$cache" -o -name CMakeFiles \) \
        -prune -o -name "$1" -type f -perm -u+x -print |
        awk -F/ '{ print NF "\t" $0 }' | sort -n | head -n1 | cut -f2-
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

# runner_usage NAME: the usage line of runner NAME, then its option lines from standard input.
runner_usage()
{
    echo "usage: $1 --build DIR [options]"
    cat
}

# runner_options ARG...: the command line: the options both runners take (below), and the
# runner's own through its runner_own_option OPTION [VALUE]..., which refuses any other with
# runner_unknown_option. An option takes one value unless it sets runner_values=0.
runner_options()
{
    while [[ $# -gt 0 ]]; do
        runner_values=1
        case $1 in
        --build) build_dir=$2 ;;
        --results) results=$2 ;;
        --cache) cache=$2 ;;
        --scenarios) globs=$2 ;;
        --timeout) boot_timeout=$2 ;;
        --verdict) verdict=$2 ;;
        --fixture) fixture=1; runner_values=0 ;;
        --list) list=1; runner_values=0 ;;
        -h | --help) usage; exit 0 ;;
        *) runner_own_option "$@" ;;
        esac
        shift $((1 + runner_values))
    done
}

# runner_unknown_option OPTION: refused, after the usage (status 2).
runner_unknown_option()
{
    usage >&2
    die "unknown option '$1'"
}

# runner_need_tools HINT TOOL...: every TOOL is on PATH, or the first one missing is refused
# (status 2) with HINT, the command that installs them.
runner_need_tools()
{
    local hint=$1 tool
    shift
    for tool in "$@"; do
        command -v "$tool" >/dev/null || die "'$tool' is missing (run: $hint)"
    done
}

# runner_serial_tail: the last lines of the guest's console (RESULTS/serial.log), when the
# guest did not reach its end.
runner_serial_tail()
{
    echo "--- last lines of $results/serial.log"
    tail -n 40 "$results/serial.log"
}

# runner_verdict TAG NAME VERDICT: scenario NAME's VERDICT (pass, skip or fail) kept in
# RESULTS/NAME/verdict, which runner_start --verdict reads, and printed; a fail sets failed=1.
runner_verdict()
{
    echo "$3" >"$results/$2/verdict"
    if [[ $3 == fail ]]; then
        failed=1
    fi
    printf '%s: %-24s %s\n' "$1" "$2" "$3"
}
