/** The UI's pure helpers: the live pattern test, preview → allowlist glob, client setup lines. */
import { describe, expect, test } from "bun:test";
import { connectPage, setupLine } from "../../web/pages/connect.ts";
import { previewToPattern } from "../../web/pages/finding-detail.ts";
import { compilePattern, maskValue, testPattern } from "../../web/pattern.ts";
import type { Client } from "../../web/types.ts";

describe("testPattern", () => {
  const cases: Array<[string, string, string[]]> = [
    ["acme_[a-z]{3}", "x acme_abc y acme_def", ["acme_abc", "acme_def"]],
    ["token=([A-Z0-9]{4})", "token=AB12 token=ZZ99", ["AB12", "ZZ99"]], // group 1 preferred
    ["(?i)secret", "SECRET and Secret", ["SECRET", "Secret"]],
    ["nomatch", "nothing here", []],
    ["b?x|y", "y and x", ["y", "x"]],
  ];
  for (const [pattern, sample, want] of cases)
    test(`${pattern} on ${JSON.stringify(sample)}`, () => {
      const r = testPattern(pattern, sample);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.matches.map((m) => m.text)).toEqual(want);
    });

  test("an invalid pattern reports the error instead of throwing", () => {
    const r = testPattern("acme_(", "acme_x");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/invalid/i);
  });

  test("offsets point into the sample", () => {
    const r = testPattern("k=(\\d+)", "ab k=123");
    expect(r.ok && r.matches[0]).toEqual({ start: 5, end: 8, text: "123" });
  });

  test("the matcher's static checks: empty matches and nested quantifiers are refused", () => {
    const empty = testPattern("a*", "bbb");
    expect(empty.ok).toBe(false);
    const nested = testPattern("(a+)+$", "aaaa");
    expect(nested.ok).toBe(false);
    if (!nested.ok) expect(nested.error).toContain("backtrack");
  });

  test("(?i) becomes the i flag", () => {
    expect(compilePattern("(?i)abc").flags).toContain("i");
  });
});

test("previewToPattern turns a masked preview into a glob", () => {
  expect(previewToPattern("AKIA****MPLE")).toBe("AKIA*MPLE");
  expect(previewToPattern("ja****@example.com")).toBe("ja*@example.com");
  expect(maskValue("AKIAIOSFODNN7EXAMPLE")).toBe("AKIA****MPLE");
});

test("setupLine prefers the catalog's command and fills in the real proxy address", () => {
  const base: Client = {
    id: "x",
    display_name: "X",
    category: "cli",
    provider: "anthropic",
    ua_prefixes: [],
    proxy_config: {
      config_type: "env",
      setup_instructions: "Set it.",
      env_var: "ANTHROPIC_BASE_URL",
      setup_cmd: null,
    },
    website: null,
    seen: false,
    last_seen: null,
    connect: null,
  };
  expect(setupLine(base, "http://127.0.0.1:9999")).toBe("export ANTHROPIC_BASE_URL=http://127.0.0.1:9999");
  const cmd = {
    ...base,
    proxy_config: {
      ...base.proxy_config,
      setup_cmd: "codex -c 'openai_base_url=\"http://127.0.0.1:8080/v1\"'",
    },
  };
  expect(setupLine(cmd, "http://127.0.0.1:9999")).toBe(
    "codex -c 'openai_base_url=\"http://127.0.0.1:9999/v1\"'",
  );
  expect(typeof connectPage).toBe("function");
});
