#!/usr/bin/env bash
# Writes the fake system trees that tests/logger/test-doctor.cpp checks (run from this folder).
# Handler folders under proc/irq/N/ hold a .handler-dir file only so that git keeps them.
set -e
w() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" > "$1"; }
msr() { mkdir -p "$(dirname "$1")"; python3 -c "import sys,struct; sys.stdout.buffer.write(b'\0'*0x34+struct.pack('<Q',$2))" > "$1"; }
cpus() { # tree n siblings-fn
  for ((c=0;c<$2;c++)); do w $1/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list "$c"; done; }
stat() { # tree n
  { echo "cpu  1000 0 500 90000 100 0 10 0 0 0"; for ((c=0;c<$2;c++)); do echo "cpu$c 250 0 125 22500 25 0 2 0 0 0"; done; echo "intr 12345"; } > $1/proc/stat; }
idle() { # tree cpu name latency disable index
  d=$1/sys/devices/system/cpu/cpu$2/cpuidle/state$6; w $d/name "$3"; w $d/latency "$4"; w $d/disable "$5"; }
irq() { # tree n handler affinity
  mkdir -p $1/proc/irq/$2/$3; : > $1/proc/irq/$2/$3/.handler-dir; w $1/proc/irq/$2/smp_affinity_list "$4"; }
limits() { w $1/proc/self/limits "Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max locked memory         $2 $2 bytes"; }
flags_full="fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov constant_tsc nonstop_tsc rdtscp lm"

# 1. A tuned RT logger: isolated, nohz_full, performance, no SMT, deep C-states off, PREEMPT_RT.
t=rt-logger; rm -rf $t
w $t/sys/devices/system/cpu/online "0-3"; w $t/sys/devices/system/cpu/isolated "2-3"; w $t/sys/devices/system/cpu/nohz_full "2-3"
w $t/sys/devices/system/cpu/smt/active 0; cpus $t 4
for c in 0 1 2 3; do w $t/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor performance
  idle $t $c POLL 0 0 0; idle $t $c C1 2 0 1; idle $t $c C1E 10 1 2; idle $t $c C6 133 1 3; done
w $t/sys/devices/system/clocksource/clocksource0/current_clocksource tsc; w $t/sys/kernel/realtime 1
mkdir -p $t/proc; stat $t 4; w $t/proc/cpuinfo "processor	: 0
flags		: $flags_full"
w $t/proc/sys/kernel/sched_rt_runtime_us -1; w $t/proc/sys/kernel/sched_rt_period_us 1000000
irq $t 0 timer 0; irq $t 24 eth0 0-1; irq $t 25 nvme0q0 0-1; mkdir -p $t/proc/irq/26; w $t/proc/irq/26/smp_affinity_list 0-3
w $t/proc/1/comm systemd; w $t/proc/640/comm sshd
limits $t unlimited; w $t/proc/self/status "Name:	irqloop
CapEff:	0000000000000000"; w $t/proc/swaps "Filename				Type		Size		Used		Priority"
msr $t/dev/cpu/2/msr 3

# 2. A laptop: powersave, SMT, deep C-states, irqbalance, swap, small memlock, default RT throttling.
t=laptop; rm -rf $t
w $t/sys/devices/system/cpu/online "0-7"; w $t/sys/devices/system/cpu/isolated ""
w $t/sys/devices/system/cpu/smt/active 1
for c in 0 1 2 3 4 5 6 7; do w $t/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list "$((c%4)),$((c%4+4))"
  w $t/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor powersave
  idle $t $c POLL 0 0 0; idle $t $c C1_ACPI 1 0 1; idle $t $c C2_ACPI 127 0 2; idle $t $c C3_ACPI 1048 0 3; done
w $t/sys/devices/system/clocksource/clocksource0/current_clocksource tsc
mkdir -p $t/proc; stat $t 8; w $t/proc/cpuinfo "processor	: 0
flags		: $flags_full"
w $t/proc/sys/kernel/sched_rt_runtime_us 950000; w $t/proc/sys/kernel/sched_rt_period_us 1000000
irq $t 0 timer 0-7; irq $t 9 acpi 0-7; irq $t 120 iwlwifi 0-7; irq $t 121 i915 0-7; irq $t 122 xhci_hcd 0-7
w $t/proc/1/comm systemd; w $t/proc/812/comm irqbalance; w $t/proc/900/comm firefox
limits $t 8388608; w $t/proc/self/status "Name:	irqloop
CapEff:	0000000000000000"
w $t/proc/swaps "Filename				Type		Size		Used		Priority
/dev/nvme0n1p3                          partition	16777212	0		-2"
msr $t/dev/cpu/1/msr 41; msr $t/dev/cpu/0/msr 41

# 3. A tuned server with RT throttling left on (the distribution default).
t=throttled; rm -rf $t
w $t/sys/devices/system/cpu/online "0-1"; w $t/sys/devices/system/cpu/isolated "1"; w $t/sys/devices/system/cpu/nohz_full "1"
w $t/sys/devices/system/cpu/smt/active 0; cpus $t 2
for c in 0 1; do w $t/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor performance
  idle $t $c POLL 0 0 0; idle $t $c C1 2 0 1; done
w $t/sys/devices/system/clocksource/clocksource0/current_clocksource tsc; w $t/sys/kernel/realtime 1
mkdir -p $t/proc; stat $t 2; w $t/proc/cpuinfo "processor	: 0
flags		: $flags_full"
w $t/proc/sys/kernel/sched_rt_runtime_us 950000; w $t/proc/sys/kernel/sched_rt_period_us 1000000
irq $t 0 timer 0; irq $t 30 eth0 0
limits $t unlimited; w $t/proc/self/status "Name:	irqloop
CapEff:	000001ffffffffff"; w $t/proc/swaps "Filename				Type		Size		Used		Priority"
msr $t/dev/cpu/1/msr 0

# 4. A VM: no cpufreq, haltpoll, kvm-clock, TSC not flagged nonstop, no MSR device, not RT.
t=vm; rm -rf $t
w $t/sys/devices/system/cpu/online "0-1"; w $t/sys/devices/system/cpu/isolated "1"
cpus $t 2
for c in 0 1; do idle $t $c POLL 0 0 0; idle $t $c "haltpoll idle" 1 0 1; done
w $t/sys/devices/system/clocksource/clocksource0/current_clocksource kvm-clock
mkdir -p $t/proc; stat $t 2; w $t/proc/cpuinfo "processor	: 0
flags		: fpu vme de pse tsc msr pae mce cx8 apic sep constant_tsc rdtscp lm hypervisor"
w $t/proc/sys/kernel/sched_rt_runtime_us -1; w $t/proc/sys/kernel/sched_rt_period_us 1000000
irq $t 0 timer 0; irq $t 24 virtio0-input.0 1; irq $t 25 virtio0-output.0 0
limits $t 8388608; w $t/proc/self/status "Name:	irqloop
CapEff:	000001ffffffffff"; w $t/proc/swaps "Filename				Type		Size		Used		Priority"
mkdir -p $t/dev/cpu/1; : > $t/dev/cpu/1/cpuid
