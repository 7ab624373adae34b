# SPDX-License-Identifier: MIT
#
# The start both testbed guests' PID 1 share (guest-init.sh, raspi3b/guest-init.sh), sourced
# first: busybox's applets on PATH and the kernel's file systems mounted.
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
