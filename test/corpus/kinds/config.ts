/** The corpus kinds of category config: one entry per rule, its value made from the provider's documented format. */
import { AT_REST, type Kind, kindsOf } from "../contexts.ts";

const kind = kindsOf("config");

export const CONFIG: Kind[] = [
  kind(
    "database_url_password",
    "PostgreSQL",
    "DATABASE_URL",
    "",
    (g) =>
      `${g.pick(["postgres", "postgresql", "mysql", "mongodb+srv", "mssql", "mariadb"])}://app_${g.lowerNum(5)}:${g.password().replace(/[#]/g, "")}@db-${g.lowerNum(6)}.internal.acme.io:5432/app`,
    AT_REST,
  ),
  kind(
    "broker_url_password",
    "Redis",
    "BROKER_URL",
    "",
    (g) =>
      `${g.pick(["amqps", "redis", "rediss", "nats"])}://${g.pick(["", "default", "guest"])}:${g.password().replace(/[#]/g, "")}@cache-${g.lowerNum(5)}.acme.cloud:6380`,
    AT_REST,
  ),
  kind(
    "url_credentials",
    "URL",
    "SERVICE_URL",
    "",
    (g) =>
      `${g.pick(["https", "http", "ftp", "sftp", "smtp", "smtps", "ldap", "ldaps", "git+https", "ssh", "webdav", "socks5"])}://${g.pick(["deploy", "ci-bot", "svc_backup", "admin", "jdoe"])}:${g.password().replace(/[#]/g, "")}@${g.pick(["git.acme.io", "files.acme.io", "smtp.acme.io", "10.1.2.3:2121", "ldap.corp.acme.io"])}/`,
    AT_REST,
  ),
  kind(
    "jdbc_password",
    "JDBC",
    "SPRING_DATASOURCE_URL",
    "",
    (g) =>
      `jdbc:${g.pick(["postgresql", "mysql", "sqlserver", "oracle:thin"])}://db-${g.lowerNum(5)}.acme.io:5432/app?user=app&password=${g.password().replace(/[#&;]/g, "")}`,
    AT_REST,
  ),
  kind(
    "connection_string_password",
    "SQL Server",
    "ConnectionStrings__Default",
    "",
    (g) =>
      `Server=tcp:sql-${g.lowerNum(5)}.database.windows.net,1433;Database=app;User ID=app;Password=${g.password().replace(/[;"#]/g, "")};Encrypt=True;`,
    AT_REST,
  ),
  kind(
    "npmrc_auth_token",
    "npm",
    "NPMRC",
    "",
    (g) =>
      `//${g.pick(["registry.npmjs.org", "npm.pkg.github.com", "acme.jfrog.io/artifactory/api/npm/npm"])}/:_authToken=${g.uuid()}`,
    ["file", "yaml", "json", "env", "prose"],
  ),
  kind("yarnrc_auth_token", "Yarn", "YARNRC", "", (g) => `npmAuthToken: ${g.uuid()}`, [
    "file",
    "json",
    "env",
    "prose",
  ]),
  kind(
    "nuget_config_password",
    "NuGet",
    "NUGET_CONFIG",
    "",
    (g) => `<add key="ClearTextPassword" value="${g.password().replace(/[&<>"]/g, "")}" />`,
    ["file", "json", "env", "prose"],
  ),
  kind(
    "curl_basic_auth",
    "curl",
    "CURL",
    "",
    (g) =>
      `curl -u ${g.pick(["deploy", "admin", "ci", "jdoe"])}:${g.password().replace(/[$"'\\]/g, "")} https://api.acme.io/v1/export`,
    ["file", "json", "yaml", "prose"],
  ),
  kind(
    "basic_auth_header",
    "HTTP",
    "AUTHORIZATION",
    "",
    (g) =>
      `Authorization: Basic ${Buffer.from(`${g.pick(["deploy", "api", "svc-report"])}:${g.password()}`).toString("base64")}`,
    ["json", "yaml", "prose", "assignment"],
  ),
  kind(
    "docker_config_auth",
    "Docker",
    "DOCKER_CONFIG",
    "",
    (g) =>
      `{"auths": {"registry.acme.io": {"auth": "${Buffer.from(`ci-bot:${g.password()}`).toString("base64")}"}}}`,
    ["file", "env", "prose", "yaml"],
  ),
  kind(
    "netrc_password",
    "netrc",
    "NETRC",
    "",
    (g) =>
      `machine ${g.pick(["api.heroku.com", "github.com", "git.acme.io"])} login ${g.pick(["deploy", "jdoe"])} password ${g.password()}`,
    ["file", "json", "yaml", "prose", "env"],
  ),
  kind(
    "maven_settings_password",
    "Maven",
    "MAVEN_SETTINGS",
    "",
    (g) =>
      `<server><id>acme-releases</id><username>ci</username><password>${g.password().replace(/[&<>$]/g, "")}</password></server>`,
    ["file", "json", "yaml", "prose", "env"],
  ),
  kind("laravel_app_key", "Laravel", "APP_KEY", "", (g) => `base64:${g.b64bytes(32)}`, [
    "env",
    "yaml",
    "json",
  ]),
  kind("rails_secret_key_base", "Rails", "SECRET_KEY_BASE", "", (g) => `${g.hex(128)}`, [
    "env",
    "yaml",
    "json",
    "assignment",
  ]),
  kind(
    "django_secret_key",
    "Django",
    "DJANGO_SECRET_KEY",
    "",
    (g) =>
      `${g.pick(["django-insecure-", ""])}${g.tok(50, "abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)")}`,
    ["assignment", "json", "yaml"],
  ),
  kind("symfony_app_secret", "Symfony", "APP_SECRET", "", (g) => `${g.hex(32)}`, ["env", "yaml", "json"]),
  kind(
    "wireguard_private_key",
    "WireGuard",
    "WG_PRIVATE_KEY",
    "",
    (g) => `[Interface]
PrivateKey = ${Buffer.from(g.bytes(32)).toString("base64")}
Address = 10.8.0.2/24`,
    ["file", "json", "yaml", "prose", "env"],
  ),
  kind(
    "putty_private_key",
    "PuTTY",
    "PUTTY_KEY",
    "",
    (g) => `PuTTY-User-Key-File-3: ssh-ed25519
Encryption: none
Comment: deploy@acme
Public-Lines: 2
${g.b64(64)}
${g.b64(20)}
Private-Lines: 1
${g.b64(44)}
Private-MAC: ${g.hex(64)}`,
    ["file", "json", "yaml", "prose", "env"],
  ),
];
