import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaults, loadConfigQuick } from "../../src/config/files.ts";
import {
  ConfigError,
  diffConfig,
  loadConfig,
  sanitizeConfig,
  validateConfig,
} from "../../src/config/load.ts";
import { configSchema } from "../../src/config/schema.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "sluice-config-"));
}

describe("config", () => {
  test("works with no config file at all", () => {
    const home = tmp();
    const { config, files, warnings } = loadConfig({ env: { SLUICE_HOME: home }, projectDir: null });
    expect(files).toEqual([]);
    expect(warnings).toEqual([]);
    expect(config.port).toBe(8080);
    expect(config.bind).toBe("127.0.0.1");
    expect(config.proxy).toMatchObject({ timeout: 120, retries: 1, max_connections: 10, drain_timeout: 30 });
    expect(config.proxy.max_body_size).toBe(52428800);
    expect(config.dashboard.port).toBe(8081);
    expect(config.pipeline.encoding).toMatchObject({
      max_depth: 2,
      min_decoded_length: 8,
      max_decoded_length: 10000,
    });
  });

  test("the project file merges over the global file", () => {
    const home = tmp();
    const project = tmp();
    writeFileSync(join(home, "config.yaml"), "proxy:\n  timeout: 60\n  retries: 2\n");
    writeFileSync(join(project, ".sluice.yaml"), "proxy:\n  retries: 3\n");
    const { config, files } = loadConfig({ env: { SLUICE_HOME: home }, projectDir: project });
    expect(files).toHaveLength(2);
    expect(config.proxy.timeout).toBe(60);
    expect(config.proxy.retries).toBe(3);
  });

  test.each([
    [{ proxy: { timeout: 500 } }, "proxy.timeout = 500 is invalid: allowed range 1 to 300"],
    [{ proxy: { retries: 9 } }, "proxy.retries = 9 is invalid: allowed range 0 to 5"],
    [{ proxy: { max_connections: 0 } }, "proxy.max_connections = 0 is invalid: allowed range 1 to 100"],
    [{ proxy: { mode: "off" } }, 'proxy.mode = "off" is invalid: allowed values: "active", "passthrough"'],
    [{ bind: "0.0.0.0" }, 'bind = "0.0.0.0" is invalid: sluice listens on loopback only'],
    [{ proxy: { ca_bundle: "/nonexistent/ca.pem" } }, "proxy.ca_bundle"],
  ])("rejects %j with a message naming key, value and range", (raw, message) => {
    expect(() => validateConfig(raw)).toThrow(ConfigError);
    expect(() => validateConfig(raw)).toThrow(message);
  });

  test("unknown keys are warned about, not fatal", () => {
    const { warnings } = validateConfig({ proxy: { timout: 3 }, colour: true });
    expect(warnings).toEqual([
      'unknown config key "proxy.timout" is ignored',
      'unknown config key "colour" is ignored',
    ]);
  });

  test("verify_ssl false warns", () => {
    const home = tmp();
    writeFileSync(join(home, "config.yaml"), "proxy:\n  verify_ssl: false\n");
    const { warnings } = loadConfig({ env: { SLUICE_HOME: home }, projectDir: null });
    expect(warnings.join("\n")).toContain("verify_ssl is false");
  });

  test("invalid YAML names the file and line", () => {
    const home = tmp();
    writeFileSync(join(home, "config.yaml"), "proxy:\n  timeout: [1,\n");
    expect(() => loadConfig({ env: { SLUICE_HOME: home }, projectDir: null })).toThrow(
      /config\.yaml:\d+: invalid YAML/,
    );
  });

  test("the password never appears in the sanitized config or a diff", () => {
    const { config } = validateConfig({ dashboard: { password: "hunter2-very-secret" } });
    expect(JSON.stringify(sanitizeConfig(config))).not.toContain("hunter2");
    const { config: other } = validateConfig({});
    expect(diffConfig(other, config).join("\n")).not.toContain("hunter2");
  });
});

describe("config without zod (sluice scan's fast path)", () => {
  test("defaults() is exactly configSchema.parse({}), key order included, and a new object each time", () => {
    const parsed = configSchema.parse({});
    expect(defaults()).toStrictEqual(parsed);
    expect(JSON.stringify(defaults())).toBe(JSON.stringify(parsed));
    const a = defaults();
    a.proxy.timeout = 1;
    a.allowlists.paths.push("x");
    expect(defaults().proxy.timeout).toBe(120);
    expect(defaults().allowlists.paths).toEqual([]);
  });

  test("loadConfigQuick gives what loadConfig gives: no file, a file, a password, a missing --config", async () => {
    const home = tmp();
    const project = tmp();
    const opts = { env: { SLUICE_HOME: home }, projectDir: project };
    expect(await loadConfigQuick(opts)).toStrictEqual(loadConfig(opts));
    const pw = { env: { SLUICE_HOME: home, SLUICE_DASHBOARD_PASSWORD: "pw" }, projectDir: project };
    expect((await loadConfigQuick(pw)).config.dashboard.password).toBe("pw");
    writeFileSync(join(project, ".sluice.yaml"), "proxy:\n  retries: 3\nnope: 1\n");
    const quick = await loadConfigQuick(opts);
    expect(quick).toStrictEqual(loadConfig(opts));
    expect(quick.config.proxy.retries).toBe(3);
    expect(quick.warnings[0]).toContain("nope");
    const missing = { ...opts, configPath: join(home, "missing.yaml") };
    await expect(loadConfigQuick(missing)).rejects.toBeInstanceOf(ConfigError);
  });
});
