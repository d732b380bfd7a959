/** The corpus kinds of category keys: one entry per rule, its value made from the provider's documented format. */
import { DEFAULT_CONTEXTS, type Kind } from "../contexts.ts";
import type { Gen } from "../gen.ts";

export const KEYS: Kind[] = [
  kind(
    "private_key",
    "private key",
    "TLS_PRIVATE_KEY",
    "",
    (g) =>
      `-----BEGIN ${g.pick(["RSA ", "EC ", "", "ENCRYPTED ", "DSA "])}PRIVATE KEY-----\n${Array.from({ length: 8 }, () => g.b64(64)).join("\n")}\n${g.b64(28)}==\n-----END PRIVATE KEY-----`,
    ["assignment", "call", "yaml", "json", "env", "prose"],
  ),
  kind(
    "openssh_private_key",
    "SSH",
    "SSH_PRIVATE_KEY",
    "",
    (g) =>
      `-----BEGIN OPENSSH PRIVATE KEY-----\n${Array.from({ length: 8 }, () => g.b64(64)).join("\n")}\n${g.b64(28)}==\n-----END OPENSSH PRIVATE KEY-----`,
    ["assignment", "call", "yaml", "json", "env", "prose"],
  ),
  kind(
    "pgp_private_key",
    "PGP",
    "GPG_PRIVATE_KEY",
    "",
    (g) =>
      `-----BEGIN PGP PRIVATE KEY BLOCK-----\n${Array.from({ length: 8 }, () => g.b64(64)).join("\n")}\n${g.b64(28)}==\n-----END PGP PRIVATE KEY BLOCK-----`,
    ["assignment", "call", "yaml", "json", "env", "prose"],
  ),
  kind(
    "jwt",
    "JWT",
    "ACCESS_TOKEN",
    "api.acme.io",
    (g) =>
      `eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.${Buffer.from(JSON.stringify({ sub: g.lowerNum(12), iat: 1700000000 + g.int(9e7), scope: "read write" })).toString("base64url")}.${g.b64url(86)}`,
    undefined,
  ),
];

function kind(
  rule: string,
  label: string,
  env: string,
  host: string,
  value: (g: Gen) => string,
  contexts?: Kind["contexts"],
  header?: string,
): Kind {
  return {
    rule,
    family: "secrets",
    category: "keys",
    label,
    env,
    host,
    value,
    contexts: contexts ?? DEFAULT_CONTEXTS,
    header,
  };
}
