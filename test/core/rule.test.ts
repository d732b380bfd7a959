/**
 * One declaration of a rule's fields (src/core/rule.ts): a rule file, a YAML `custom_rules` entry and
 * the dashboard API accept the same rule with the same defaults, and refuse each wrong field with
 * the same words.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, validateConfig } from "../../src/config/load.ts";
import { parseRuleText } from "../../src/detect/rule-file.ts";
import { type Env, makeEnv } from "../dashboard/_env.ts";

let env: Env;
beforeAll(async () => {
  env = await makeEnv();
});
afterAll(() => env.close());

/** The problem each surface tells for `rule`, or null when it takes it. */
async function told(
  rule: Record<string, unknown>,
): Promise<{ file: string | null; config: string | null; api: string | null }> {
  const text = JSON.stringify({ rules: [rule] });
  const file = parseRuleText(text, "user.json").problems[0]?.message ?? null;
  let config: string | null = null;
  try {
    validateConfig({ custom_rules: [rule] });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    config = e.message;
  }
  const r = await env.json("POST", "/api/v1/rules", rule);
  const api = r.status === 201 ? null : (r.body as { error: { message: string } }).error.message;
  return { file, config, api };
}

const base = { name: "acme-token", pattern: "acme_[A-Za-z0-9]{24}" };

describe("a wrong field is refused by every surface with the same words", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "an unknown severity",
      { severity: "extreme" },
      'severity: must be one of "critical", "high", "warning", "info"',
    ],
    ["a detector that does not exist", { detector: "magic" }, "detector: must be one of"],
    ["an unknown validator", { validator: "crc32" }, "validator: must be one of"],
    ["a name with spaces", { name: "Acme Token" }, "name: must be lowercase letters"],
    ["an empty pattern", { pattern: "" }, "pattern: must be a regular expression of 1 to 4096 characters"],
    ["an empty tag", { tags: ["ok", ""] }, "tags: must be a list of at most 50 tags of 1 to 64 characters"],
    [
      "too many keywords",
      { keywords: Array.from({ length: 101 }, (_, i) => `k${i}`) },
      "keywords: must be a list of at most 100 words",
    ],
    [
      "a description of 1,001 characters",
      { description: "d".repeat(1001) },
      "description: must be text of at most 1000 characters",
    ],
  ];
  for (const [what, over, words] of cases)
    test(what, async () => {
      const t = await told({
        ...base,
        ...over,
        name: (over.name as string) ?? `${base.name}-${Math.random().toString(36).slice(2, 8)}`,
      });
      expect(t.file).toContain(words);
      expect(t.config).toContain(`custom_rules.0.${words.split(":")[0]}`);
      expect(t.config).toContain(words.split(": ")[1]!);
      expect(t.api).toContain(words);
    });

  test("a missing pattern is required everywhere", async () => {
    const t = await told({ name: "no-pattern" });
    expect(t.file).toBe("pattern: is required");
    expect(t.config).toContain("custom_rules.0.pattern");
    expect(t.config).toContain("is required");
    expect(t.api).toBe("pattern: is required");
  });
});

test("a right rule is taken by every surface with the same declared defaults", async () => {
  const rule = { name: "acme-defaults", pattern: "acme_[A-Za-z0-9]{24}" };
  const fromFile = parseRuleText(JSON.stringify([rule]), "user.json").rules[0]!;
  const fromConfig = validateConfig({ custom_rules: [rule] }).config.custom_rules[0]!;
  const r = await env.json("POST", "/api/v1/rules", rule);
  expect(r.status).toBe(201);
  const defaults = {
    detector: "custom",
    severity: "high",
    action: "",
    description: "",
    tags: [] as string[],
    validator: null,
    keywords: null,
  } as const;
  expect(fromFile).toMatchObject({ ...rule, ...defaults, enabled: true, tier: "custom", entropy: null });
  expect(fromConfig).toEqual({ ...rule, ...defaults });
  expect(r.body).toMatchObject({ ...rule, ...defaults, enabled: true, tier: "custom", source: "dashboard" });
});

test("the API refuses a field it does not take, and a rule file's field it cannot set", async () => {
  expect(
    (await env.json("POST", "/api/v1/rules", { ...base, severty: "high" })).body.error.message,
  ).toContain("severty: is not a rule field");
  expect(
    (await env.json("POST", "/api/v1/rules", { ...base, name: "t1", tier: "pro" })).body.error.message,
  ).toBe("tier: cannot be set here");
  expect((await env.json("PUT", "/api/v1/rules/acme-defaults", { name: "renamed" })).body.error.message).toBe(
    "name: cannot be set here",
  );
  const cleared = await env.json("PUT", "/api/v1/rules/acme-defaults", {
    validator: null,
    keywords: ["acme"],
  });
  expect(cleared.status).toBe(200);
  expect(cleared.body).toMatchObject({ validator: null, keywords: ["acme"] });
});
