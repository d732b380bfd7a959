/**
 * The labeled corpus: realistic positives for every community rule (in the contexts developers paste
 * them: .env files, shell history, code, logs, JSON) and realistic negatives that a scanner must
 * leave alone (UUIDs, git SHAs, hashes, base64 images, minified JS, lockfiles, test card numbers,
 * placeholder keys from documentation). Credential-shaped values are generated at run time from a
 * seeded generator: none is real and none sits in the source as a literal.
 */

let seed = 20261121;
/** mulberry32: a small seeded generator with good low bits. */
function rnd(n: number): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
}
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";
/** A random token (no character repeated 3 times in a row, so it never looks like a placeholder). */
export function tok(n: number, alphabet = ALNUM): string {
  let out = "";
  while (out.length < n) {
    const c = alphabet[rnd(alphabet.length)]!;
    if (out.length >= 2 && out.at(-1) === c && out.at(-2) === c) continue;
    out += c;
  }
  return out;
}
const j = (...parts: string[]) => parts.join("");

export interface Positive {
  rule: string;
  family: "secrets" | "pii" | "proprietary";
  text: string;
}

export function positives(): Positive[] {
  const s = (rule: string, text: string): Positive => ({ rule, family: "secrets", text });
  const p = (rule: string, text: string): Positive => ({ rule, family: "pii", text });
  const q = (rule: string, text: string): Positive => ({ rule, family: "proprietary", text });
  const awsId = j("AKIA", tok(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"));
  const pem = (kind: string) =>
    j(
      "-----BEGIN ",
      kind,
      "-----\n",
      Array.from({ length: 6 }, () => tok(64, `${ALNUM}+/`)).join("\n"),
      "\n-----END ",
      kind,
      "-----",
    );
  return [
    s("aws_access_key_id", j("[default]\naws_access_key_id = ", awsId, "\nregion = eu-west-1")),
    s(
      "aws_secret_access_key",
      j("[default]\naws_access_key_id = ", awsId, "\naws_secret_access_key = ", tok(40, `${ALNUM}+/`)),
    ),
    s("github_pat", j("git remote set-url origin https://", "ghp_", tok(36), "@github.com/acme/api.git")),
    s("github_fine_grained_pat", j("export GH_TOKEN=github_pat_", tok(22), "_", tok(59))),
    s("github_oauth_token", j('{"access_token":"gho_', tok(36), '","token_type":"bearer"}')),
    s("github_app_token", j("installation token: ghs_", tok(36))),
    s("github_refresh_token", j("refresh=ghr_", tok(76))),
    s(
      "gitlab_pat",
      j('curl --header "PRIVATE-TOKEN: glpat-', tok(20), '" https://gitlab.example.com/api/v4/projects'),
    ),
    s("gitlab_ci_token", j("gitlab-runner register --token glrt-", tok(24))),
    s(
      "slack_token",
      j(
        'client = WebClient(token="xoxb-',
        tok(12, "0123456789"),
        "-",
        tok(13, "0123456789"),
        "-",
        tok(24),
        '")',
      ),
    ),
    s(
      "slack_webhook_url",
      j(
        "SLACK_WEBHOOK=https://hooks.slack.com/services/T",
        tok(8, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"),
        "/B",
        tok(8, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"),
        "/",
        tok(24),
      ),
    ),
    s(
      "slack_app_token",
      j(
        "SLACK_APP_TOKEN=xapp-1-A",
        tok(10, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"),
        "-",
        tok(13, "0123456789"),
        "-",
        tok(64, HEX),
      ),
    ),
    s("stripe_secret_key", j("Stripe.api_key = 'sk_live_", tok(24), "'")),
    s("stripe_test_key", j("STRIPE_KEY=sk_test_", tok(24))),
    s("stripe_webhook_secret", j('endpoint_secret = "whsec_', tok(32), '"')),
    s("openai_project_key", j('client = OpenAI(api_key="sk-proj-', tok(74, `${ALNUM}_-`), '")')),
    s("openai_legacy_key", j("OPENAI_API_KEY=sk-", tok(48))),
    s("anthropic_api_key", j("ANTHROPIC_API_KEY=sk-ant-api03-", tok(93, `${ALNUM}_-`), "AA")),
    s(
      "google_api_key",
      j("https://maps.googleapis.com/maps/api/geocode/json?key=AIza", tok(35, `${ALNUM}_-`)),
    ),
    s(
      "google_service_account_key",
      j(
        '{\n  "type": "service_account",\n  "project_id": "acme-prod",\n  "private_key_id": "',
        tok(40, HEX),
        '",\n  "client_id": "104872934123456789012"\n}',
      ),
    ),
    s(
      "google_oauth_client_secret",
      j('{"installed":{"client_id":"1.apps.googleusercontent.com","client_secret":"GOCSPX-', tok(28), '"}}'),
    ),
    s(
      "google_oauth_access_token",
      j(
        'curl -H "Authorization: Bearer ya29.',
        tok(120, `${ALNUM}_-`),
        '" https://www.googleapis.com/drive/v3/files',
      ),
    ),
    s(
      "azure_storage_account_key",
      j(
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey=",
        tok(86, `${ALNUM}+/`),
        "==;EndpointSuffix=core.windows.net",
      ),
    ),
    s(
      "azure_service_bus_connection_string",
      j(
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=",
        tok(43, `${ALNUM}+/`),
        "=",
      ),
    ),
    s(
      "azure_sas_token",
      j(
        "https://acme.blob.core.windows.net/backups/db.bak?sv=2023-01-03&st=2025-01-01T00%3A00%3A00Z&se=2026-01-01T00%3A00%3A00Z&sr=b&sp=r&sig=",
        tok(43, `${ALNUM}+/`),
        "%3D",
      ),
    ),
    s("azure_ad_client_secret", j("AZURE_CLIENT_SECRET=", tok(3), "8Q~", tok(34, `${ALNUM}_.`))),
    s("private_key", pem("RSA PRIVATE KEY")),
    s("openssh_private_key", pem("OPENSSH PRIVATE KEY")),
    s("pgp_private_key", pem("PGP PRIVATE KEY BLOCK")),
    s(
      "jwt",
      j(
        "Authorization: Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI",
        tok(40, `${ALNUM}_-`),
        ".",
        tok(86, `${ALNUM}_-`),
      ),
    ),
    s("npm_token", j("//registry.npmjs.org/:_authToken=npm_", tok(36))),
    s(
      "pypi_token",
      j("[pypi]\n  username = __token__\n  password = pypi-AgEIcHlwaS5vcmc", tok(120, `${ALNUM}_-`)),
    ),
    s("dockerhub_pat", j("echo dckr_pat_", tok(27), " | docker login -u acme --password-stdin")),
    s("twilio_api_key", j("TWILIO_API_KEY_SID=SK", tok(32, HEX))),
    s("twilio_auth_token", j('twilio_auth_token: "', tok(32, HEX), '"')),
    s("sendgrid_api_key", j("SENDGRID_API_KEY='SG.", tok(22, `${ALNUM}_-`), ".", tok(43, `${ALNUM}_-`), "'")),
    s("mailgun_api_key", j("mg = Mailgun('key-", tok(32, HEX), "')")),
    s("shopify_token", j("shopify.Session.setup(api_key, 'shpat_", tok(32, HEX), "')")),
    s("heroku_api_key", j("heroku auth:token => HRKU-", tok(60, `${ALNUM}_-`))),
    s(
      "heroku_legacy_api_key",
      j(
        "HEROKU_API_KEY=",
        tok(8, HEX),
        "-",
        tok(4, HEX),
        "-4",
        tok(3, HEX),
        "-8",
        tok(3, HEX),
        "-",
        tok(12, HEX),
      ),
    ),
    s("digitalocean_token", j("doctl auth init -t dop_v1_", tok(64, HEX))),
    s("datadog_api_key", j("DD_API_KEY=", tok(32, HEX), " DD_SITE=datadoghq.eu")),
    s("vault_token", j("export VAULT_TOKEN=hvs.", tok(95, `${ALNUM}_-`))),
    s("vault_legacy_token", j("vault login s.", tok(24))),
    s("databricks_token", j("databricks configure --token dapi", tok(32, HEX))),
    s(
      "huggingface_token",
      j("huggingface-cli login --token hf_", tok(34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")),
    ),
    s(
      "database_url_password",
      j("DATABASE_URL=postgresql://billing:", tok(18), "@billing-db.internal:5432/billing?sslmode=require"),
    ),
    s("broker_url_password", j("REDIS_URL=rediss://default:", tok(20), "@cache-17.acme.cloud:6380")),
    s("generic_secret_assignment", j('const config = { clientSecret: "', tok(40, `${ALNUM}-_`), '" };')),
    p("email_address", "Please contact maria.gonzalez@northwind-traders.com about the invoice."),
    p("us_ssn", "Applicant SSN 219-09-9999, DOB 1984-03-02"),
    p("credit_card", "Charge card 4916 3385 0608 2832 for the renewal"),
    p("phone_number", "Call me on +49 30 901820 or +1 (646) 555-0187"),
    p("ip_address_v4", "Failed login from 51.15.88.201 at 03:12 UTC"),
    p("ip_address_v6", "client 2a01:4f8:c17:3b2::1 connected"),
    p("iban", "Wire to NL91 ABNA 0417 1643 00, ref 7781"),
    p("passport_number", "Traveller: J. Smith, passport no. 533380006"),
    q("confidential_marker", "ACME CORP - CONFIDENTIAL - Q3 pricing strategy draft"),
    q("env_file", "I ran `cat backend/.env.production` and got this output"),
    q("credential_file", "scp ~/.ssh/id_ed25519 build@10.0.0.5:/tmp/"),
    q("key_file", "nginx ssl_certificate_key /etc/ssl/private/acme-prod.pem;"),
  ];
}

export interface Negative {
  kind: string;
  text: string;
}

export function negatives(): Negative[] {
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
    Buffer.from(tok(600, ALNUM)),
  ]).map((b, i) => (i > 16 ? (b * 7 + i) & 255 : b));
  const integrity = () => j("sha512-", tok(86, `${ALNUM}+/`), "==");
  return [
    {
      kind: "uuid",
      text: "request_id=550e8400-e29b-41d4-a716-446655440000 trace=9f2c4e1a-7b3d-4c5e-8f6a-1b2c3d4e5f60",
    },
    {
      kind: "git sha",
      text: "commit 3f786850e387550fdab836ed7e6dc881de23001b\nMerge: 1a2b3c4 5d6e7f8\nAuthor: Dev <dev@example.com>",
    },
    { kind: "git log", text: "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 fix: handle empty token list (#412)" },
    {
      kind: "sha256",
      text: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/app.tar.gz",
    },
    {
      kind: "docker digest",
      text: "image: node@sha256:4b7d8a64f1e2c3b5a6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9",
    },
    {
      kind: "base64 image",
      text: `<img src="data:image/png;base64,${Buffer.from(png).toString("base64")}">`,
    },
    {
      kind: "base64 image (markdown)",
      text: `![chart](data:image/png;base64,${Buffer.from(png.reverse()).toString("base64")})`,
    },
    {
      kind: "minified js",
      text: '!function(e,t){"object"==typeof exports&&"undefined"!=typeof module?module.exports=t():"function"==typeof define&&define.amd?define(t):(e=e||self).Vue=t()}(this,function(){"use strict";var e=Object.freeze({});function t(e){return null==e}function n(e){return null!=e}var a=/[A-Z]/g,s=function(e){return e.replace(a,"-$1").toLowerCase()},c=0x5f3759df,u="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";return{v:"2.7.16",k:u}});',
    },
    {
      kind: "package-lock.json",
      text: JSON.stringify(
        {
          packages: {
            "node_modules/react": {
              version: "18.3.1",
              resolved: "https://registry.npmjs.org/react/-/react-18.3.1.tgz",
              integrity: integrity(),
            },
            "node_modules/zod": { version: "4.6.7", integrity: integrity() },
          },
        },
        null,
        2,
      ),
    },
    {
      kind: "yarn.lock",
      text: `"@babel/core@^7.24.0":\n  version "7.24.5"\n  resolved "https://registry.yarnpkg.com/@babel/core/-/core-7.24.5.tgz#15ab5b98e101972d171aeef92ac70d8d6718f06a"\n  integrity ${integrity()}`,
    },
    { kind: "bun.lock", text: `"zod": ["zod@4.6.7", "", {}, "${integrity()}"],` },
    {
      kind: "test cards",
      text: "Use 4242 4242 4242 4242 or 4111-1111-1111-1111 (Visa), 5555555555554444 (MC), 378282246310005 (Amex) in test mode.",
    },
    {
      kind: "doc placeholders",
      text: "export OPENAI_API_KEY=sk-...\nexport ANTHROPIC_API_KEY=sk-ant-api03-...\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nAWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX\nSTRIPE_SECRET_KEY=sk_live_...\napi_key: <YOUR_API_KEY>",
    },
    {
      kind: "env template",
      text:
        "DATABASE_URL=postgres://user:$" +
        "{DB_PASSWORD}@localhost:5432/app\nREDIS_URL=redis://localhost:6379\nSECRET_KEY=changeme\nAPI_TOKEN=\n# see .env.example for the keys",
    },
    {
      kind: "versions and dates",
      text: "Released v1.22.3 on 2024-11-05T10:30:00Z (build 20241105.3, node 22.11.0, python 3.12.7); took 1,234.56 ms",
    },
    {
      kind: "private addresses",
      text: "listen 127.0.0.1:8080; upstream 10.0.12.7 and 192.168.1.20; docs use 203.0.113.10 and 2001:db8::1; link fe80::1",
    },
    {
      kind: "example emails",
      text: "Send mail to user@example.com or admin@test.com; image: logo@2x.png; npm i @types/node@22.10.1",
    },
    {
      kind: "code identifiers",
      text: "const tokenCount = countTokens(messages); const passwordField = form.elements.namedItem('password'); if (secretName in secretsManager) {}",
    },
    {
      kind: "css and hex",
      text: "color: #ff6600; background: #0a0b0c; --shadow: 0 1px 2px rgba(0,0,0,.2); mask: 0xdeadbeef; nonce 7f3c9a2b4d5e6f708192a3b4c5d6e7f8",
    },
    {
      kind: "invalid ids",
      text: "SSN 000-12-3456 and 666-45-6789 are invalid; IBAN DE89 3704 0044 0532 0130 01 fails MOD-97; card 4539 1488 0343 6468 fails Luhn",
    },
    {
      kind: "phone-like numbers",
      text: "order #1234567890, zip 94103-1234, port 5432, ratio 3.14159265, ISBN 978-3-16-148410-0",
    },
    {
      kind: "prose",
      text: "The internal API only returns JSON. Confidential computing keeps data encrypted in use. Our password policy requires 12 characters.",
    },
    {
      kind: "public key",
      text: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq8k3mWr5pTzV2YH0nX7bE4cR9sQ1dL6fJ8uA3oK2wM dev@laptop\n-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    },
    {
      kind: "jwt header only",
      text: "JWT headers start with eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 which is base64 of a JSON object",
    },
    {
      kind: "file mentions",
      text: "process.env.PORT, import.meta.env.VITE_URL, ~/.ssh/id_rsa.pub, README.pem.md, .env.example, cert.pem.txt",
    },
    {
      kind: "base64 text",
      text: `config blob: ${Buffer.from("log_level=debug\nretries=3\ntimeout=30s\nregion=eu-west-1").toString("base64")}`,
    },
  ];
}
