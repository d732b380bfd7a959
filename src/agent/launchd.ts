/**
 * The launchd LaunchAgent `~/Library/LaunchAgents/dev.sluice.agent.plist`: its XML text (the Apple
 * property-list format: a `dict` of keys and typed values), and the `launchctl` steps that load,
 * unload and inspect it in the user's GUI domain. A LaunchAgent needs no root; it starts at login.
 */
import { join } from "node:path";
import { home } from "./paths.ts";

type Env = Record<string, string | undefined>;

export const LABEL = "dev.sluice.agent";

export function plistPath(env: Env = process.env): string {
  return join(home(env), "Library", "LaunchAgents", `${LABEL}.plist`);
}

function xml(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

type PlistValue = string | number | boolean | PlistValue[] | { [key: string]: PlistValue };

function value(v: PlistValue, indent: string): string {
  const inner = `${indent}  `;
  if (typeof v === "string") return `${indent}<string>${xml(v)}</string>`;
  if (typeof v === "number") return `${indent}<integer>${Math.trunc(v)}</integer>`;
  if (typeof v === "boolean") return `${indent}<${v}/>`;
  if (Array.isArray(v))
    return `${indent}<array>\n${v.map((x) => value(x, inner)).join("\n")}\n${indent}</array>`;
  const entries = Object.entries(v).map(([k, x]) => `${inner}<key>${xml(k)}</key>\n${value(x, inner)}`);
  return `${indent}<dict>\n${entries.join("\n")}\n${indent}</dict>`;
}

export interface PlistOptions {
  /** The agent's command line: its executable and `run` with its flags. */
  exec: string[];
  environment: Record<string, string>;
  /** Where launchd writes what the agent prints outside its own log (a crash, say). */
  stderrPath: string;
}

export function renderPlist(opts: PlistOptions): string {
  const job: Record<string, PlistValue> = {
    Label: LABEL,
    ProgramArguments: opts.exec,
    RunAtLoad: true,
    // Restarted when it fails, like systemd's Restart=on-failure; a clean stop stays stopped.
    KeepAlive: { SuccessfulExit: false },
    ThrottleInterval: 5,
    // SIGTERM, then SIGKILL after this: sluice drains for up to 30 s.
    ExitTimeOut: 45,
    Umask: 0o077,
    StandardOutPath: opts.stderrPath,
    StandardErrorPath: opts.stderrPath,
  };
  if (Object.keys(opts.environment).length) job.EnvironmentVariables = opts.environment;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by \`sluice-agent install\`; \`sluice-agent uninstall\` removes it. -->
<plist version="1.0">
${value(job, "")}
</plist>
`;
}

/** The `launchctl` command lines the service steps use, in the user's GUI domain. */
export function launchctl(uid: number, path: string) {
  const domain = `gui/${uid}`;
  const target = `${domain}/${LABEL}`;
  return {
    reachable: ["launchctl", "print", domain],
    loaded: ["launchctl", "print", target],
    enable: ["launchctl", "enable", target],
    bootstrap: ["launchctl", "bootstrap", domain, path],
    bootout: ["launchctl", "bootout", target],
  };
}
