#!/bin/sh
# "Boot" the default entry of the /boot/grub/grub.cfg that Debian's update-grub
# generated, into the machine's tree (default /opt/topology): containers
# cannot reboot, so this writes what the kernel would show after booting it:
#   proc/cmdline                        BOOT_IMAGE= and the entry's linux arguments
#   sys/devices/system/cpu/nohz_full    the nohz_full= list (the last one), else "(null)"
#   sys/devices/system/cpu/isolated     the isolcpus= CPUs when domain-isolated
#                                       (no flags, or the domain flag), else empty
# and a new boot id in /run/rke2-numa-molecule-boot-id, so that it also serves
# as ansible.builtin.reboot's reboot_command (its boot_time_command reads the id).
# Booting the same entry again changes nothing but the id (it prints unchanged).
set -eu
set -f
root=${1:-/opt/topology}
line=$(grep -m1 -E '^[[:space:]]*linux[[:space:]]' /boot/grub/grub.cfg)
# shellcheck disable=SC2086
set -- $line
shift
kernel=$1
shift
nohz="(null)"
iso=""
for word in "$@"; do
    case "$word" in
        nohz_full=*) nohz=${word#nohz_full=} ;;
        isolcpus=*) iso=${word#isolcpus=} ;;
    esac
done
isolated=""
if [ -n "$iso" ]; then
    flags=""
    cpus=""
    old_ifs=$IFS
    IFS=,
    for part in $iso; do
        case "$part" in
            [0-9]*) cpus="${cpus:+$cpus,}$part" ;;
            *) flags="$flags $part" ;;
        esac
    done
    IFS=$old_ifs
    case "$flags " in
        " " | *" domain "*) isolated=$cpus ;;
    esac
fi
state=$(cat "$root/proc/cmdline" "$root/sys/devices/system/cpu/nohz_full" "$root/sys/devices/system/cpu/isolated" 2>/dev/null || true)
printf 'BOOT_IMAGE=%s %s\n' "$kernel" "$*" > "$root/proc/cmdline"
printf '%s\n' "$nohz" > "$root/sys/devices/system/cpu/nohz_full"
printf '%s\n' "$isolated" > "$root/sys/devices/system/cpu/isolated"
# Tell Ansible whether the machine now runs something else.
if [ "$state" = "$(cat "$root/proc/cmdline" "$root/sys/devices/system/cpu/nohz_full" "$root/sys/devices/system/cpu/isolated")" ]; then
    echo unchanged
else
    echo changed
fi
cat /proc/sys/kernel/random/uuid > /run/rke2-numa-molecule-boot-id
