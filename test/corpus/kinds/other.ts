/**
 * The corpus kinds of the other families and shapes: personal data, proprietary markers and file
 * paths, generic secret assignments, and Kubernetes documents that no context template writes.
 */
import { type Kind, TEXTUAL } from "../contexts.ts";
import { ALNUM, type Gen } from "../gen.ts";

const FIRST = ["maria", "james", "aiko", "olu", "sven", "priya", "diego", "fatima"];
const LAST = ["gonzalez", "smith", "tanaka", "adeyemi", "lindqvist", "raman", "costa", "haddad"];
const DOMAINS = [
  "northwind-traders.com",
  "contoso.co.uk",
  "fabrikam.io",
  "tailspin-toys.de",
  "acme-corp.net",
];

/** A public IPv4 address outside private, documentation and reserved ranges. */
function publicIp(g: Gen): string {
  const first = g.pick([23, 34, 51, 52, 81, 104, 142, 185, 212]);
  return `${first}.${1 + g.int(254)}.${g.int(256)}.${1 + g.int(254)}`;
}

function ssn(g: Gen): string {
  const area = String(1 + g.int(665)).padStart(3, "0");
  return `${area === "666" ? "667" : area}-${String(1 + g.int(98)).padStart(2, "0")}-${String(1 + g.int(9998)).padStart(4, "0")}`;
}

const pii = (rule: string, label: string, env: string, value: (g: Gen) => string): Kind => ({
  rule,
  family: "pii",
  category: "pii",
  label,
  env,
  host: "",
  value,
  contexts: TEXTUAL,
});
const prop = (rule: string, label: string, env: string, value: (g: Gen) => string): Kind => ({
  rule,
  family: "proprietary",
  category: "proprietary",
  label,
  env,
  host: "",
  value,
  contexts: ["prose", "json", "assignment"],
});

/** A Kubernetes Secret manifest and its first data value. */
function k8sSecret(g: Gen): { text: string; value: string } {
  const value = Buffer.from(g.password()).toString("base64");
  const text = [
    "apiVersion: v1",
    "kind: Secret",
    "metadata:",
    `  name: ${g.pick(["db", "api", "smtp"])}-credentials`,
    "  namespace: production",
    "type: Opaque",
    "data:",
    `  password: ${value}`,
    `  username: ${Buffer.from(g.pick(["app", "svc_api"])).toString("base64")}`,
  ].join("\n");
  return { text, value };
}

function kubeconfig(g: Gen): { text: string; value: string } {
  const value = `LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ${g.b64(600)}`;
  const text = [
    "apiVersion: v1",
    "kind: Config",
    "users:",
    "- name: admin@prod",
    "  user:",
    `    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t${g.b64(200)}`,
    `    client-key-data: ${value}`,
  ].join("\n");
  return { text, value };
}

export const OTHER: Kind[] = [
  pii(
    "email_address",
    "customer email",
    "CUSTOMER_EMAIL",
    (g) => `${g.pick(FIRST)}.${g.pick(LAST)}@${g.pick(DOMAINS)}`,
  ),
  pii("us_ssn", "SSN", "APPLICANT_SSN", ssn),
  pii("credit_card", "card", "CARD_NUMBER", (g) =>
    g.card().replace(/(\d{4})(?=\d)/g, g.pick(["$1 ", "$1-", "$1"])),
  ),
  pii("ip_address_v4", "client IP", "CLIENT_IP", publicIp),
  pii(
    "ip_address_v6",
    "client IPv6",
    "CLIENT_IPV6",
    (g) => `2a01:4f8:${g.hex(3)}:${g.hex(4)}::${1 + g.int(9)}`,
  ),
  pii("iban", "IBAN", "PAYOUT_IBAN", (g) => {
    const iban = g.iban();
    return g.int(2) ? iban.replace(/(.{4})(?=.)/g, "$1 ") : iban;
  }),
  pii(
    "passport_number",
    "passport",
    "PASSPORT_NUMBER",
    (g) => `${g.pick(["X", "C", "K", ""])}${g.digits(8)}`,
  ),
  prop("confidential_marker", "document", "DOC_BANNER", (g) =>
    g.pick(["CONFIDENTIAL", "INTERNAL ONLY", "DO NOT DISTRIBUTE", "COMPANY CONFIDENTIAL"]),
  ),
  prop(
    "env_file",
    "env file",
    "ENV_FILE",
    (g) => `${g.pick(["backend/", "/srv/app/", "./"])}.env${g.pick(["", ".production", ".local"])}`,
  ),
  prop("credential_file", "credential file", "KEY_PATH", (g) =>
    g.pick([
      "~/.ssh/id_ed25519",
      "/home/dev/.aws/credentials.json",
      "~/.npmrc",
      "~/.git-credentials",
      "~/.kube/kubeconfig",
    ]),
  ),
  prop(
    "key_file",
    "key file",
    "TLS_KEY_FILE",
    (g) =>
      `${g.pick(["certs/", "/etc/ssl/private/"])}${g.pick(["client", "acme-prod", "signing"])}.${g.pick(["pem", "p12", "pfx", "jks"])}`,
  ),
  {
    rule: "generic_secret_assignment",
    family: "secrets",
    category: "generic",
    label: "service",
    env: "CLIENT_SECRET",
    host: "",
    value: (g) => g.tok(32, `${ALNUM}-_`),
    contexts: ["assignment", "call", "yaml", "json", "env", "prose"],
  },
  {
    rule: "kubernetes_secret_data",
    family: "secrets",
    category: "devops",
    label: "Kubernetes",
    env: "K8S_SECRET",
    host: "",
    value: (g) => k8sSecret(g).value,
    contexts: [],
    documents: (g) => [k8sSecret(g), k8sSecret(g), k8sSecret(g)],
  },
  {
    rule: "kubeconfig_client_key",
    family: "secrets",
    category: "devops",
    label: "Kubernetes",
    env: "KUBECONFIG",
    host: "",
    value: (g) => kubeconfig(g).value,
    contexts: [],
    documents: (g) => [kubeconfig(g), kubeconfig(g), kubeconfig(g)],
  },
];
