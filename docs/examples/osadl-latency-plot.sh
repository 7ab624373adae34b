#!/bin/sh
# SPDX-License-Identifier: MIT
# A latency plot from `cyclictest --histogram` text, made the way OSADL's latency-plot recipe
# describes it (osadl.org, "Create a latency plot from cyclictest histogram data"): the
# largest maximum from the "# Max Latencies" line, the data lines (no comment, no empty line)
# with a tab between fields, one two-column file per thread, and gnuplot drawing each as
# histeps on a logarithmic count axis into a PNG. Our own script; it reads real cyclictest
# output and `irqloop export --format cyclictest-hist` alike. A curve is titled CPU<N> as
# OSADL's are, or, in irqloop's export, by the run of its column ("# irqloop column N: run
# R, uuid U, label "L", ...": "L (run R)").
#
#   usage: osadl-latency-plot.sh HISTOGRAM-FILE [OUTPUT.png]     (default: plot.png)
#   OSADL_PLOT_COMMANDS=FILE keeps a copy of the gnuplot commands (the tests read the titles).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 HISTOGRAM-FILE [OUTPUT.png]" >&2; exit 2; }
in=$1
png=${2:-plot.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The largest of the per-thread maxima, leading zeros dropped.
max=$(grep '^# Max Latencies:' "$in" | tr ' ' '\n' | grep -E '^[0-9]+$' | sort -n | tail -1 |
  sed 's/^0*//')
# The histogram lines: "bin count count ...", separated by tabs.
grep -v -e '^#' -e '^$' "$in" | tr ' ' '\t' >"$work/histogram"
threads=$(head -1 "$work/histogram" | awk -F'\t' '{ print NF - 1 }')
bins=$(wc -l <"$work/histogram")

{
  printf 'set title "Latency plot"\nset terminal png\n'
  printf 'set xlabel "Latency (us), max %s us"\n' "${max:-0}"
  printf 'set logscale y\nset xrange [0:%s]\nset yrange [0.8:*]\n' "$bins"
  printf 'set ylabel "Number of latency samples"\nset output "%s"\nplot ' "$png"
  i=1
  while [ "$i" -le "$threads" ]; do
    cut -f1,$((i + 1)) "$work/histogram" >"$work/histogram$i"
    [ "$i" -gt 1 ] && printf ', '
    # The column's run and label, as the export's comment line has them (the label as a JSON
    # string: a quote in it is \"); gnuplot gets it single-quoted, ' doubled, not enhanced;
    # a run without a label is "run R".
    title=$(sed -n -E "s/^# irqloop column $((i - 1)): run ([0-9]+), uuid [^,]*, label \"(([^\"\\\\]|\\\\.)*)\", .*/\2 (run \1)/p" "$in" |
      head -n 1 | sed -e 's/^ (run \([0-9]*\))$/run \1/' -e 's/\\"/"/g' -e "s/'/''/g")
    printf "\"%s\" using 1:2 title '%s' noenhanced with histeps" "$work/histogram$i" \
      "${title:-CPU$((i - 1))}"
    i=$((i + 1))
  done
  printf '\n'
} >"$work/plotcmd"
[ -z "${OSADL_PLOT_COMMANDS:-}" ] || cp "$work/plotcmd" "$OSADL_PLOT_COMMANDS"
gnuplot "$work/plotcmd"
