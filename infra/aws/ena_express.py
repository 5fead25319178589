"""Host settings ENA Express needs, applied on every boot where a launch template enables it.

AWS's ENA Express prerequisites for Linux (EC2 User Guide, "ENA Express") and its check script
(amzn/amzn-drivers ``scripts/check-ena-express-settings.sh``) require, on the interface that
carries the traffic: an MTU of at most 8900 (SRD's frames are smaller than the VPC's 9001 jumbo
frames; a larger MTU falls back to plain ENA), ``net.ipv4.tcp_limit_output_bytes`` of at least
1 MiB (1048576), and byte queue limits (BQL) disabled on every transmit queue (``limit_min`` set to
``max``). The MTU and BQL do not survive a reboot, so the boot script installs a oneshot unit that
applies all three on every start (the sysctl also goes to ``/etc/sysctl.d``). The recommended
queue sizes (TX >= 1024, RX >= 8192, via ethtool) are left at the driver's defaults.
"""

from __future__ import annotations

from typing import Final

MTU: Final = 8900
TCP_LIMIT_OUTPUT_BYTES: Final = 1048576
SCRIPT: Final = "/usr/local/sbin/gpupool-ena-express"
UNIT: Final = "/etc/systemd/system/gpupool-ena-express.service"
SYSCTL: Final = "/etc/sysctl.d/60-gpupool-ena-express.conf"


def settings_script(sysctl_path: str = SYSCTL) -> str:
    """Apply the settings to the default route's interface (or ``$1``); idempotent."""
    return f"""#!/bin/bash
set -euo pipefail
shopt -s nullglob
SYS="${{GPUPOOL_SYSFS:-/sys}}"  # overridable for tests only
dev="${{1:-$(ip -o -4 route show default | awk '{{print $5; exit}}')}}"
[ -n "$dev" ] || {{ echo "gpupool: no default-route interface for ENA Express" >&2; exit 1; }}
mtu=$(cat "$SYS/class/net/$dev/mtu")
if [ "$mtu" -gt {MTU} ]; then
  ip link set dev "$dev" mtu {MTU}
fi
printf 'net.ipv4.tcp_limit_output_bytes = {TCP_LIMIT_OUTPUT_BYTES}\\n' > {sysctl_path}
sysctl -q -p {sysctl_path}
for txq in "$SYS/class/net/$dev"/queues/tx-*; do
  echo max > "$txq/byte_queue_limits/limit_min"
done
"""


def unit(script_path: str = SCRIPT) -> str:
    """Oneshot at every boot, once the network is up (DHCP has set the VPC's 9001 MTU)."""
    return f"""[Unit]
Description=gpupool: ENA Express host settings (MTU {MTU}, tcp_limit_output_bytes, BQL off)
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart={script_path}

[Install]
WantedBy=multi-user.target
"""


def boot_part() -> str:
    """Boot-script part: install the script and its unit, enable and start the unit."""
    return f"""
# gpupool: ENA Express is on for this instance: apply AWS's required host settings every boot.
cat > {SCRIPT} <<'GPUPOOL_ENA_EXPRESS'
{settings_script()}GPUPOOL_ENA_EXPRESS
chmod 0755 {SCRIPT}
cat > {UNIT} <<'GPUPOOL_ENA_UNIT'
{unit()}GPUPOOL_ENA_UNIT
systemctl daemon-reload
systemctl enable --now gpupool-ena-express.service
"""


def client_boot_script() -> str:
    """A client's whole boot script (clients get no CloudWatch agent): the settings only."""
    return "#!/bin/bash\nset -euo pipefail\n" + boot_part()
