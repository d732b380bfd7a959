/**
 * Which targets `GET /ws?url=` may open. A page or a prompt-injected tool that can make a request to
 * sluice must not reach, through it, anything on this machine or its network: loopback, private and
 * link-local ranges, carrier-grade NAT, multicast, cloud metadata addresses, sluice's own ports, in any
 * spelling. The URL parser normalises decimal, octal, hex and short IPv4 forms; IPv6 forms that embed
 * an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the address they embed.
 *
 * A host name is resolved once, here, and the tunnel connects to the address that was checked (keeping
 * the name for the Host header and for TLS), so a second lookup cannot answer differently (DNS
 * rebinding). A private target is reachable only when `websocket.allowed_private_targets` names it.
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { shownTarget } from "../core/request-url.ts";

export interface WsTargetPolicy {
  /** `host`, `host:port` or a CIDR range (`10.0.0.0/8`) that may be private. */
  allowedPrivate: readonly string[];
  /** sluice's own listeners: never a target, even when allowed. */
  ownPorts: readonly number[];
  /** Every address a host name resolves to. */
  resolve?: (host: string) => Promise<string[]>;
}

export type WsTarget =
  | {
      ok: true;
      /** The target as the client named it, without credentials: what records show. */
      shown: string;
      /** The URL to connect to: the checked address in place of the name. */
      connect: string;
      /** `Host` header value (the name and port the client asked for). */
      host: string;
      /** Name for TLS (server name indication and certificate check); absent for an address. */
      servername?: string;
    }
  | { ok: false; status: number; message: string };

const defaultResolve = async (host: string): Promise<string[]> =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Check a `?url=` value and resolve its host. */
export async function checkWsTarget(raw: string, policy: WsTargetPolicy): Promise<WsTarget> {
  const refuse = (message: string, status = 403) => ({ ok: false as const, status, message });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("url is not a valid URL", 400);
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:")
    return refuse(`only ws:// and wss:// targets are allowed, not ${url.protocol}//`, 400);
  const shown = shownTarget(url);
  const port = Number(url.port || (url.protocol === "wss:" ? 443 : 80));
  const literal = bare(url.hostname);

  let addresses: string[];
  if (ipaddr.isValid(literal)) addresses = [literal];
  else {
    try {
      addresses = await (policy.resolve ?? defaultResolve)(literal);
    } catch (e) {
      return refuse(`cannot resolve ${literal}: ${(e as Error).message}`, 502);
    }
    if (addresses.length === 0) return refuse(`cannot resolve ${literal}: no address`, 502);
  }

  const allowed = allowedPrivate(policy.allowedPrivate, literal, port);
  for (const address of addresses) {
    const kind = addressKind(address);
    if (kind === "public") continue;
    if (!allowed(address))
      return refuse(
        `${shown} is not public: ${address} is ${kind}. /ws opens public ws:// and wss:// targets only; ` +
          "websocket.allowed_private_targets allows a private one",
      );
    if ((kind === "loopback" || kind === "unspecified") && policy.ownPorts.includes(port))
      return refuse(`${shown} is sluice's own port ${port}`);
  }

  const address = addresses[0]!;
  const connect = new URL(url.href);
  connect.username = "";
  connect.password = "";
  connect.hash = "";
  connect.hostname = address.includes(":") ? `[${address}]` : address;
  return {
    ok: true,
    shown,
    connect: connect.href,
    host: url.host,
    ...(ipaddr.isValid(literal) ? {} : { servername: literal }),
  };
}

export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "carrier-grade NAT"
  | "multicast"
  | "unspecified"
  | "reserved";

const KIND_OF_RANGE: Record<string, AddressKind> = {
  unicast: "public",
  loopback: "loopback",
  private: "private",
  uniqueLocal: "private",
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade NAT",
  multicast: "multicast",
  unspecified: "unspecified",
};

/** What an IPv4 or IPv6 address is, judging an embedded IPv4 address by itself. */
export function addressKind(address: string): AddressKind {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return "reserved";
  }
  if (parsed.kind() === "ipv6") {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded === "refuse") return "reserved";
    if (embedded) return addressKind(embedded.toString());
  }
  // Metadata services live at 169.254.169.254 (link-local), 100.100.100.200 (carrier-grade NAT) and
  // fd00:ec2::254 (unique local): each falls in a range refused here.
  return KIND_OF_RANGE[parsed.range()] ?? "reserved";
}

/**
 * The IPv4 address an IPv6 address carries: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64
 * (64:ff9b::/96) and 6to4 (2002:AABB:CCDD::). Teredo and local-use NAT64 are refused outright: no
 * WebSocket service is reached through them, and the address they carry is obscured.
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | "refuse" | null {
  const range = v6.range();
  if (range === "ipv4Mapped") return v6.toIPv4Address();
  if (range === "teredo") return "refuse";
  const p = v6.parts;
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === "rfc6052") {
    if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((w) => w === 0))
      return fromWords(p[6]!, p[7]!);
    return "refuse";
  }
  if (range === "6to4") return fromWords(p[1]!, p[2]!);
  if (p.slice(0, 6).every((w) => w === 0) && (p[6] !== 0 || p[7]! > 1)) return fromWords(p[6]!, p[7]!);
  return null;
}

/**
 * Whether the config's `allowed_private_targets` lets `host:port` reach `address`. An entry is a host
 * (`db.internal`, `127.0.0.1`, `[::1]`), a host and port, or a CIDR range; hosts are normalised by
 * the same URL parser as targets, so `127.1` allows `127.0.0.1`.
 */
function allowedPrivate(
  entries: readonly string[],
  host: string,
  port: number,
): (address: string) => boolean {
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  let named = false;
  for (const entry of entries) {
    const e = entry.trim();
    if (e.includes("/")) {
      if (ipaddr.isValidCIDR(e)) ranges.push(ipaddr.parseCIDR(e));
      continue;
    }
    const parsed = URL.parse(`ws://${e}`);
    if (!parsed) continue;
    const entryHost = bare(parsed.hostname);
    if (entryHost === host && (!parsed.port || Number(parsed.port) === port)) named = true;
  }
  return (address) => {
    if (named) return true;
    const parsed = ipaddr.parse(address);
    return ranges.some(([net, bits]) => parsed.kind() === net.kind() && parsed.match(net, bits));
  };
}

/** A URL's hostname without IPv6 brackets or a trailing dot, in lower case. */
function bare(hostname: string): string {
  const h = hostname.replace(/\.$/, "").toLowerCase();
  return h.startsWith("[") ? h.slice(1, -1) : h;
}
