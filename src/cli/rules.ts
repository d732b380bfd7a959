import { writeFileSync } from "node:fs";
import { defineCommand } from "citty";

const configArg = {
  config: { type: "string", alias: "c", description: "Config file (default {config_dir}/config.yaml)" },
} as const;

const filterArgs = {
  search: { type: "string", description: "Name or description contains (comma-separated terms: any)" },
  q: { type: "string", description: "Same as --search" },
  detector: { type: "string", description: "secrets, pii, proprietary, custom, injection" },
  tier: { type: "string", description: "community, custom" },
  severity: { type: "string", description: "critical, high, warning, info" },
  enabled: { type: "string", description: "true or false" },
  tag: { type: "string", description: "Exact tag" },
  source: { type: "string", description: "builtin, config, dashboard, import" },
} as const;

function fail(msg: string, code = 1): never {
  process.stderr.write(`sluice rules: ${msg}\n`);
  process.exit(code);
}

async function setup(configPath?: string) {
  const { ConfigError, loadConfig } = await import("../config/load.ts");
  try {
    return loadConfig({ configPath, checkPatterns: false }); // validate reports bad patterns itself
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
}

function filterOf(args: Record<string, unknown>) {
  const enabled = args.enabled as string | undefined;
  if (enabled !== undefined && enabled !== "true" && enabled !== "false")
    fail(`--enabled must be true or false (got "${enabled}")`);
  return {
    search: (args.search ?? args.q) as string | undefined,
    detector: args.detector as string | undefined,
    tier: args.tier as string | undefined,
    severity: args.severity as string | undefined,
    enabled: enabled === undefined ? undefined : enabled === "true",
    tag: args.tag as string | undefined,
    source: args.source as string | undefined,
  };
}

const list = defineCommand({
  meta: {
    name: "list",
    description: "List rules (the rule store, or built-in and config rules before the first serve)",
  },
  args: {
    ...configArg,
    ...filterArgs,
    format: { type: "string", alias: "f", default: "text", description: "text or json" },
  },
  async run({ args }) {
    const loaded = await setup(args.config);
    const { openCatalog } = await import("../scan/catalog.ts");
    const catalog = await openCatalog(loaded.config, loaded.configDir);
    const rules = catalog.list(filterOf(args));
    await catalog.close();
    if (args.format === "json") {
      const { exportableRule } = await import("../detect/rule-file.ts");
      process.stdout.write(
        `${JSON.stringify({ origin: catalog.origin, total: rules.length, rules: rules.map((r) => ({ ...exportableRule(r), source: r.source })) }, null, 2)}\n`,
      );
      return;
    }
    const rows = rules.map((r) => [
      r.name,
      r.detector,
      r.severity,
      r.action || "-",
      r.enabled ? "yes" : "no",
      r.tier,
      r.source,
    ]);
    const head = ["NAME", "DETECTOR", "SEVERITY", "ACTION", "ENABLED", "TIER", "SOURCE"];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const fmt = (r: string[]) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd();
    process.stdout.write(`${[fmt(head), ...rows.map(fmt)].join("\n")}\n`);
    process.stderr.write(`${rules.length} rule${rules.length === 1 ? "" : "s"} from ${catalog.where}\n`);
  },
});

const exportCmd = defineCommand({
  meta: { name: "export", description: "Export rules as YAML or JSON (same filters as list)" },
  args: {
    ...configArg,
    ...filterArgs,
    out: { type: "string", alias: "o", description: "Output file (default stdout)" },
    format: {
      type: "string",
      alias: "f",
      description: "yaml or json (default: from --out's extension, else yaml)",
    },
  },
  async run({ args }) {
    const loaded = await setup(args.config);
    const format = args.format ?? (args.out?.endsWith(".json") ? "json" : "yaml");
    if (format !== "yaml" && format !== "json") fail(`--format must be yaml or json (got "${format}")`);
    const { openCatalog } = await import("../scan/catalog.ts");
    const { exportableRule } = await import("../detect/rule-file.ts");
    const catalog = await openCatalog(loaded.config, loaded.configDir);
    const rules = catalog.list(filterOf(args)).map(exportableRule);
    await catalog.close();
    const { stringify } = await import("yaml");
    const text =
      format === "json" ? `${JSON.stringify({ rules }, null, 2)}\n` : stringify({ rules }, { lineWidth: 0 });
    if (args.out) {
      writeFileSync(args.out, text);
      process.stderr.write(`exported ${rules.length} rules to ${args.out}\n`);
    } else process.stdout.write(text);
  },
});

const importCmd = defineCommand({
  meta: {
    name: "import",
    description: "Import rules from a YAML or JSON file into the rule store (validated first)",
  },
  args: {
    ...configArg,
    file: { type: "positional", required: true, description: "Rules file" },
    replace: { type: "boolean", default: false, description: "Update rules whose name already exists" },
    "dry-run": { type: "boolean", default: false, description: "Validate and report, import nothing" },
  },
  async run({ args }) {
    const loaded = await setup(args.config);
    const { formatRuleProblem } = await import("../detect/rule-file.ts");
    const { checkRules, readRuleFile } = await import("../scan/validate.ts");
    const parsed = readRuleFile(args.file, "import");
    const problems = [...parsed.problems, ...checkRules(parsed.rules, parsed.lines, args.file)].sort(
      (a, b) => (a.line ?? 0) - (b.line ?? 0),
    );
    if (problems.length)
      fail(
        `${args.file} has ${problems.length} problem(s), nothing imported:\n${problems.map(formatRuleProblem).join("\n")}`,
      );
    if (args["dry-run"]) {
      process.stdout.write(
        `${parsed.rules.length} rules in ${args.file} are valid (dry run: nothing imported)\n`,
      );
      return;
    }
    const { importRules } = await import("../scan/catalog.ts");
    const res = await importRules(loaded.configDir, parsed.rules, args.replace);
    process.stdout.write(
      `imported ${res.added.length} rules, updated ${res.updated.length}, skipped ${res.skipped.length} existing${res.skipped.length ? ` (${res.skipped.join(", ")}; --replace updates them)` : ""}\n`,
    );
  },
});

const validate = defineCommand({
  meta: {
    name: "validate",
    description: "Compile every pattern and run every example and negative example; exit 1 on any problem",
  },
  args: {
    ...configArg,
    files: {
      type: "positional",
      required: false,
      description: "Rule files (default: built-in and config rules)",
    },
  },
  async run({ args }) {
    const files = (args._ as string[]) ?? [];
    const { formatRuleProblem } = await import("../detect/rule-file.ts");
    const { validateRuleFiles, validateInForce } = await import("../scan/validate.ts");
    let res: { rules: number; files: number; problems: import("../detect/rule-file.ts").RuleProblem[] };
    if (files.length) res = validateRuleFiles(files);
    else {
      const loaded = await setup(args.config);
      res = validateInForce(loaded.config, loaded.files[0] ?? null);
    }
    for (const p of res.problems) process.stderr.write(`${formatRuleProblem(p)}\n`);
    if (res.problems.length) fail(`${res.problems.length} problem(s) in ${res.rules} rules`);
    process.stdout.write(
      `ok: ${res.rules} rules${files.length ? ` in ${res.files} file${res.files === 1 ? "" : "s"}` : ""}\n`,
    );
  },
});

export default defineCommand({
  meta: { name: "rules", description: "Manage detection rules: list, import, export, validate" },
  subCommands: { list, import: importCmd, export: exportCmd, validate },
});
