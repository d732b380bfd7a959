/** The corpus kinds of category keys: one entry per rule, its value made from the provider's documented format. */
import { AT_REST, type Kind, kindsOf } from "../contexts.ts";

const kind = kindsOf("keys");

export const KEYS: Kind[] = [
  kind(
    "private_key",
    "private key",
    "TLS_PRIVATE_KEY",
    "",
    (g) =>
      `-----BEGIN ${g.pick(["RSA ", "EC ", "", "ENCRYPTED ", "DSA "])}PRIVATE KEY-----\n${Array.from({ length: 8 }, () => g.b64(64)).join("\n")}\n${g.b64(28)}==\n-----END PRIVATE KEY-----`,
    AT_REST,
  ),
  kind(
    "openssh_private_key",
    "SSH",
    "SSH_PRIVATE_KEY",
    "",
    (g) =>
      `-----BEGIN OPENSSH PRIVATE KEY-----\n${Array.from({ length: 8 }, () => g.b64(64)).join("\n")}\n${g.b64(28)}==\n-----END OPENSSH PRIVATE KEY-----`,
    AT_REST,
  ),
  kind(
    "pgp_private_key",
    "PGP",
    "GPG_PRIVATE_KEY",
    "",
    (g) =>
      `-----BEGIN PGP PRIVATE KEY BLOCK-----\n${Array.from({ length: 8 }, () => g.b64(64)).join("\n")}\n${g.b64(28)}==\n-----END PGP PRIVATE KEY BLOCK-----`,
    AT_REST,
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
