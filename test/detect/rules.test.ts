/**
 * The rule self-test: every example of every community rule produces a finding of that rule and no
 * negative example does (validators, keywords and entropy included), run through the same checker
 * as `sluice rules validate`. Also: the rule files are all embedded and cover the providers.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DETECTORS, RULE_ACTIONS, SEVERITIES } from "../../src/core/types.ts";
import {
  builtinRuleFiles,
  loadBuiltinRules,
  validateRuleFile,
  validateRules,
} from "../../src/detect/builtin.ts";
import { compileRules } from "../../src/detect/compile.ts";
import { scanText } from "../../src/detect/matcher.ts";
import { formatRuleProblem, parseRuleText } from "../../src/detect/rule-file.ts";
import { Gen } from "../corpus/gen.ts";

const RULES_DIR = join(import.meta.dir, "../../rules");
const rules = loadBuiltinRules();

describe("community rule files", () => {
  for (const f of builtinRuleFiles()) {
    test(`${f.file}: examples match, negative examples do not`, () => {
      const problems = validateRuleFile(f.file, f.text, "builtin").map(formatRuleProblem);
      expect(problems).toEqual([]);
    });
  }

  test("the start-up path (Bun.YAML) loads exactly what parseRuleText (the yaml package) reads", () => {
    const viaYamlPackage = builtinRuleFiles().flatMap((f) => {
      const parsed = parseRuleText(f.text, f.file, "builtin");
      expect(parsed.problems).toEqual([]);
      return parsed.rules;
    });
    expect(viaYamlPackage.length).toBeGreaterThan(50);
    expect(loadBuiltinRules()).toEqual(viaYamlPackage);
  });

  test("every rules/*.yaml file is embedded (rules/index.ts)", () => {
    const onDisk = readdirSync(RULES_DIR)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    const embedded = builtinRuleFiles()
      .map((f) => f.file.replace("rules/", ""))
      .sort();
    expect(embedded).toEqual(onDisk);
  });
});

describe("community rule set", () => {
  test("at least 250 secret kinds, pii and proprietary present", () => {
    expect(rules.filter((r) => r.detector === "secrets").length).toBeGreaterThanOrEqual(250);
    expect(rules.filter((r) => r.detector === "pii").length).toBeGreaterThanOrEqual(7);
    expect(rules.filter((r) => r.detector === "proprietary").length).toBeGreaterThanOrEqual(2);
  });

  test("every rule has every field of a rule and at least one example and negative", () => {
    const names = new Set<string>();
    for (const r of rules) {
      expect(names.has(r.name)).toBe(false);
      names.add(r.name);
      expect(r.name).toMatch(/^[a-z0-9][a-z0-9_.-]*$/);
      expect(DETECTORS).toContain(r.detector);
      expect(SEVERITIES).toContain(r.severity);
      expect(RULE_ACTIONS).toContain(r.action);
      expect(r.description.length).toBeGreaterThan(10);
      expect(r.tags.length).toBeGreaterThan(0);
      expect(r.tier).toBe("community");
      expect(r.source).toBe("builtin");
      expect(r.examples!.length).toBeGreaterThan(0);
      expect(r.negative_examples!.length).toBeGreaterThan(0);
    }
  });

  test("covers every provider the issue lists", () => {
    const tags = new Set(rules.flatMap((r) => [...r.tags, r.name]));
    for (const p of [
      "aws",
      "github",
      "gitlab",
      "slack",
      "stripe",
      "openai",
      "anthropic",
      "google",
      "azure",
      "private-key",
      "jwt",
      "npm",
      "pypi",
      "docker",
      "twilio",
      "sendgrid",
      "mailgun",
      "shopify",
      "heroku",
      "digitalocean",
      "datadog",
      "vault",
      "databricks",
      "huggingface",
      "database",
      "broker",
      "entropy",
    ])
      expect(tags.has(p)).toBe(true);
    const byName = new Set(rules.map((r) => r.name));
    for (const n of [
      "github_pat",
      "github_fine_grained_pat",
      "github_oauth_token",
      "github_app_token",
      "github_refresh_token",
      "slack_token",
      "slack_webhook_url",
      "google_api_key",
      "google_service_account_key",
      "azure_storage_account_key",
      "azure_service_bus_connection_string",
      "azure_sas_token",
      "private_key",
      "openssh_private_key",
      "pgp_private_key",
      "email_address",
      "us_ssn",
      "credit_card",
      "phone_number",
      "ip_address_v4",
      "ip_address_v6",
      "iban",
      "passport_number",
      "env_file",
      "credential_file",
      "confidential_marker",
    ])
      expect(byName.has(n)).toBe(true);
  });

  test("the prefix formats people paste are each found by a rule of their own", () => {
    const matcher = compileRules(rules);
    const g = new Gen(5);
    const found = (text: string) => scanText(matcher, text, { encoding: null }).map((m) => m.rule.name);
    const cases: [string, string][] = [
      [`AGE-SECRET-KEY-1${g.tok(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")}`, "age_secret_key"],
      [`glsa_${g.alnum(32)}_${g.hex(8)}`, "grafana_service_account_token"],
      [`NRAK-${g.upperNum(27)}`, "newrelic_user_api_key"],
      [`PMAK-${g.hex(24)}-${g.hex(34)}`, "postman_api_key"],
      [`sntryu_${g.hex(64)}`, "sentry_user_token"],
      [`pul-${g.hex(40)}`, "pulumi_access_token"],
      [`dop_v1_${g.hex(64)}`, "digitalocean_token"],
      [`xoxa-2-${g.digits(12)}-${g.digits(12)}-${g.digits(13)}-${g.hex(64)}`, "slack_workspace_token"],
      [`api_org_${g.letters(34)}`, "huggingface_org_token"],
      [`pubkey-${g.hex(32)}`, "mailgun_public_key"],
      [`sk_prod_${g.alnum(32)}`, "stripe_secret_key"],
      [`glpat-${g.b64url(20)}`, "gitlab_pat"],
      [`sk-ant-oat01-${g.b64url(93)}AA`, "anthropic_oauth_token"],
      [`sk-ant-admin01-${g.b64url(93)}AA`, "anthropic_admin_key"],
    ];
    for (const [text, rule] of cases)
      expect({ text, found: found(`got ${text} from the admin`) }).toEqual({ text, found: [rule] });
  });

  test("validators are wired to the rules the issue names", () => {
    const v = Object.fromEntries(rules.filter((r) => r.validator).map((r) => [r.name, r.validator]));
    expect(v).toMatchObject({
      credit_card: "luhn",
      us_ssn: "ssn_range",
      iban: "iban_mod97",
      ip_address_v4: "exclude_private_ips",
      ip_address_v6: "exclude_private_ips",
      bip39_seed_phrase: "bip39_checksum",
      bitcoin_wif_private_key: "base58check_wif",
      bitcoin_extended_private_key: "base58check_xprv",
      ethereum_private_key: "secp256k1_key",
      basic_auth_header: "basic_auth",
      docker_config_auth: "basic_auth",
      curl_basic_auth: "login_pair",
    });
  });

  test("high-confidence credentials and private keys block; PII mostly logs or alerts", () => {
    for (const n of [
      "aws_access_key_id",
      "github_pat",
      "private_key",
      "openssh_private_key",
      "anthropic_api_key",
    ])
      expect(rules.find((r) => r.name === n)!.action).toBe("block");
    for (const r of rules.filter((x) => x.detector === "pii")) expect(["log", "alert"]).toContain(r.action);
  });

  test("loadBuiltinRules returns fresh copies", () => {
    const a = loadBuiltinRules();
    a[0]!.tags.push("mutated");
    expect(loadBuiltinRules()[0]!.tags).not.toContain("mutated");
  });
});

describe("rule file validation (sluice rules validate)", () => {
  test("reports file and line for a bad pattern, a failing example and a matching negative", () => {
    const text = [
      "rules:",
      "  - name: good_rule",
      "    pattern: 'TICKET-[0-9]{4}'",
      "    examples: ['see TICKET-1234']",
      "    negative_examples: ['TICKET-12']",
      "  - name: broken",
      "    pattern: '([a-z'",
      "  - name: wrong_examples",
      "    pattern: 'ORDER-[0-9]{4}'",
      "    examples: ['ORDER-12']",
      "    negative_examples: ['ORDER-9999']",
      "  - name: slow",
      "    pattern: '(a+)+$'",
    ].join("\n");
    const problems = validateRuleFile("my-rules.yaml", text).map(formatRuleProblem);
    expect(problems).toContainEqual(
      expect.stringMatching(/^my-rules\.yaml:6: rule "broken": pattern does not compile/),
    );
    expect(problems).toContainEqual(
      'my-rules.yaml:8: rule "wrong_examples": example does not match: "ORDER-12"',
    );
    expect(problems).toContainEqual(
      'my-rules.yaml:8: rule "wrong_examples": negative example matches: "ORDER-9999"',
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/^my-rules\.yaml:12: rule "slow": pattern can backtrack catastrophically/),
    );
    expect(problems.some((p) => p.includes("good_rule"))).toBe(false);
  });

  test("reports YAML syntax errors and bad fields with a line", () => {
    expect(validateRuleFile("x.yaml", "rules:\n  - name: [unclosed\n").length).toBeGreaterThan(0);
    const bad = validateRuleFile("x.yaml", "rules:\n  - name: Bad Name\n    pattern: x\n");
    expect(formatRuleProblem(bad[0]!)).toMatch(
      /^x\.yaml:2: rule "Bad Name": name: must be lowercase .* \(got "Bad Name"\)$/,
    );
    const fields = validateRuleFile(
      "x.yaml",
      "rules:\n  - name: r1\n    pattern: 'abc{2}'\n    severity: extreme\n    action: nuke\n    validator: magic\n",
    ).map(formatRuleProblem);
    // Each problem on its field's line, and the rule is left out whole.
    expect(fields).toContainEqual(expect.stringMatching(/^x\.yaml:4: rule "r1": severity: must be one of/));
    expect(fields).toContainEqual(expect.stringMatching(/^x\.yaml:5: rule "r1": action: must be one of/));
    expect(fields).toContainEqual(expect.stringMatching(/^x\.yaml:6: rule "r1": validator: must be one of/));
    expect(parseRuleText("- name: r1\n  pattern: x\n  severity: extreme\n", "x.yaml").rules).toEqual([]);
  });

  test("a bare list and user tier/source", () => {
    const parsed = parseRuleText("- name: user_rule\n  pattern: 'XY-[0-9]{3}'\n", "u.yaml");
    expect(parsed.problems).toEqual([]);
    expect(parsed.rules[0]).toMatchObject({
      name: "user_rule",
      tier: "custom",
      source: "import",
      action: "",
      detector: "custom",
    });
    expect(validateRules(parsed.rules)).toEqual([]);
  });
});
