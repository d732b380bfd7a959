/** The corpus kinds of category devops: one entry per rule, its value made from the provider's documented format. */
import { DEFAULT_CONTEXTS, type Kind } from "../contexts.ts";
import type { Gen } from "../gen.ts";

export const DEVOPS: Kind[] = [
  kind(
    "vault_token",
    "Vault",
    "VAULT_TOKEN",
    "vault.acme.io:8200",
    (g) => `${g.pick(["hvs.", "hvb.", "hvr."])}${g.b64url(95)}`,
    undefined,
    "X-Vault-Token:",
  ),
  kind(
    "vault_legacy_token",
    "Vault",
    "VAULT_TOKEN",
    "vault.acme.io:8200",
    (g) => `s.${g.alnum(24)}`,
    undefined,
    "X-Vault-Token:",
  ),
  kind(
    "terraform_cloud_token",
    "Terraform Cloud",
    "TF_TOKEN_app_terraform_io",
    "app.terraform.io",
    (g) => `${g.alnum(14)}.atlasv1.${g.b64url(67)}`,
    undefined,
  ),
  kind("hcp_client_secret", "HCP", "HCP_CLIENT_SECRET", "api.cloud.hashicorp.com", (g) => `${g.b64url(64)}`, [
    "assignment",
    "call",
    "yaml",
    "json",
    "env",
    "prose",
  ]),
  kind(
    "doppler_token",
    "Doppler",
    "DOPPLER_TOKEN",
    "api.doppler.com",
    (g) => `dp.${g.pick(["pt", "st", "sa", "ct", "scim", "audit"])}.${g.alnum(43)}`,
    undefined,
  ),
  kind(
    "onepassword_service_account_token",
    "1Password",
    "OP_SERVICE_ACCOUNT_TOKEN",
    "my.1password.com",
    (g) => `ops_eyJ${g.b64(300)}`,
    undefined,
  ),
  kind(
    "onepassword_secret_key",
    "1Password",
    "OP_SECRET_KEY",
    "my.1password.com",
    (g) =>
      `A3-${g.upperNum(6)}-${g.upperNum(6)}-${g.upperNum(5)}-${g.upperNum(5)}-${g.upperNum(5)}-${g.upperNum(5)}`,
    ["assignment", "call", "yaml", "json", "env", "prose"],
  ),
  kind(
    "age_secret_key",
    "age",
    "AGE_SECRET_KEY",
    "age-encryption.org",
    (g) => `AGE-SECRET-KEY-1${g.tok(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")}`,
    ["assignment", "call", "yaml", "json", "env", "prose"],
  ),
  kind(
    "infisical_token",
    "Infisical",
    "INFISICAL_TOKEN",
    "app.infisical.com",
    (g) => `st.${g.uuid()}.${g.hex(32)}.${g.hex(32)}`,
    undefined,
  ),
  kind(
    "defined_networking_api_token",
    "Defined Networking",
    "DN_API_KEY",
    "api.defined.net",
    (g) => `dnkey-${g.lowerNum(26)}-${g.lowerNum(52)}`,
    undefined,
  ),
  kind(
    "kubeconfig_client_key",
    "Kubernetes",
    "KUBECONFIG_DATA",
    "kubernetes.default.svc",
    (g) => `LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ${g.b64(400)}`,
    [],
  ),
  kind(
    "kubernetes_secret_data",
    "Kubernetes",
    "K8S_SECRET",
    "kubernetes.default.svc",
    (g) => `${g.b64bytes(18)}`,
    [],
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
    category: "devops",
    label,
    env,
    host,
    value,
    contexts: contexts ?? DEFAULT_CONTEXTS,
    header,
  };
}
