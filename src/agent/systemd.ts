/**
 * The systemd user unit `~/.config/systemd/user/sluice-agent.service` (or under $XDG_CONFIG_HOME):
 * its text, and the `systemctl --user` steps that enable, restart, disable and inspect it. A user
 * unit needs no root; it starts at login (or at boot with `loginctl enable-linger`).
 */
import { join, resolve } from "node:path";
import { home } from "./paths.ts";

type Env = Record<string, string | undefined>;

export const UNIT = "sluice-agent.service";

export function unitPath(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(home(env), ".config");
  return join(base, "systemd", "user", UNIT);
}

/**
 * One word of a unit's command line or assignment: `%` (specifiers) and `$` (variables) doubled,
 * quoted with C escapes when it holds anything but plain path characters.
 */
export function unitWord(s: string): string {
  const escaped = s.replaceAll("%", "%%").replaceAll("$", "$$");
  if (/^[A-Za-z0-9/._+:@=,-]+$/.test(escaped)) return escaped;
  return `"${escaped.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")}"`;
}

export interface UnitOptions {
  /** The agent's command line: its executable and `run` with its flags. */
  exec: string[];
  /** Variables the agent needs to find the same config as the user who installed it. */
  environment: Record<string, string>;
}

export function renderUnit(opts: UnitOptions): string {
  const env = Object.entries(opts.environment).map(([k, v]) => `Environment=${unitWord(`${k}=${v}`)}\n`);
  return `# Written by \`sluice-agent install\`; \`sluice-agent uninstall\` removes it.
[Unit]
Description=sluice agent: keeps the sluice proxy for AI coding tools running
StartLimitIntervalSec=300
StartLimitBurst=10

[Service]
Type=exec
ExecStart=${opts.exec.map(unitWord).join(" ")}
${env.join("")}Restart=on-failure
RestartSec=2
# SIGTERM goes to the agent alone, which stops sluice gracefully (sluice drains for up to 30 s);
# whatever is left when the timeout ends is killed with the rest of the service.
KillMode=mixed
TimeoutStopSec=45
UMask=0077
# Hardening that a user service can apply without privileges (no_new_privs and seccomp filters).
# ProtectSystem=, ProtectHome= and PrivateTmp= are left out: a user manager can only set up their
# mount namespaces where unprivileged user namespaces are allowed, and sluice keeps its data in the
# home directory. MemoryDenyWriteExecute= is left out: the JavaScript JIT needs it.
NoNewPrivileges=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
SystemCallArchitectures=native
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK

[Install]
WantedBy=default.target
`;
}

/** The `systemctl --user` command lines the service steps use. */
export const systemctl = {
  reachable: ["systemctl", "--user", "show", "--property=Version"],
  daemonReload: ["systemctl", "--user", "daemon-reload"],
  enable: ["systemctl", "--user", "enable", UNIT],
  restart: ["systemctl", "--user", "restart", UNIT],
  disableNow: ["systemctl", "--user", "disable", "--now", UNIT],
  resetFailed: ["systemctl", "--user", "reset-failed", UNIT],
  isActive: ["systemctl", "--user", "is-active", UNIT],
};
