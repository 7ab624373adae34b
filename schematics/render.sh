#!/bin/sh
# SPDX-License-Identifier: MIT
# Renders each sheet to <name>.svg and <name>.png next to it, runs KiCad's ERC and checks
# that no error remains. Needs kicad-cli (KiCad 9, bookworm-backports) and rsvg-convert
# (librsvg2-bin). Only for whoever edits a schematic: CI uses the committed pictures.
set -eu
cd "$(dirname "$0")"
for sch in parport/parport.kicad_sch gpiod/gpiod.kicad_sch gpiod/gpiod-3v3.kicad_sch ftdi/ftdi.kicad_sch analyzer/analyzer.kicad_sch; do
	dir=$(dirname "$sch")
	name=$(basename "$sch" .kicad_sch)
	kicad-cli sch export svg --no-background-color -o "$dir" "$sch" >/dev/null
	rsvg-convert --background-color=white --width=2400 "$dir/$name.svg" -o "$dir/$name.png"
	kicad-cli sch erc --severity-error --exit-code-violations -o "$dir/.erc.rpt" "$sch" >/dev/null ||
		{ cat "$dir/.erc.rpt"; rm -f "$dir/.erc.rpt"; exit 1; }
	rm -f "$dir/.erc.rpt"
	echo "rendered $dir/$name.svg $dir/$name.png (ERC: no errors)"
done
