/**
 * A detection rule's fields, declared once: type, limits, default and the problem a wrong value is
 * told as. Every place that takes a rule reads it with `readRuleFields` over the fields it accepts:
 * rule files (rules/*.yaml, `sluice rules validate|import`, `scan --rules`), YAML `custom_rules`
 * (config/schema.ts), the dashboard API (dashboard/routes/rules.ts); the stored rule
 * (store/records.ts), `RuleDef` (types.ts) and the web UI's rule form derive from it.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { nullable, oneOf } from "./schema.ts";
import {
  DETECTORS,
  RULE_ACTIONS,
  RULE_DEFAULTS,
  RULE_DESCRIPTION_MAX,
  RULE_NAME,
  RULE_NAME_RULE,
  RULE_PATTERN_MAX,
  RULE_TIERS,
  SEVERITIES,
  VALIDATORS,
} from "./types.ts";

const listed = (values: readonly string[]) =>
  `must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;
const words = (max: number, len: number) =>
  t.Array(t.String({ minLength: 1, maxLength: len }), { maxItems: max });

/** Each field's schema; `problem` says what a value must be, `default` stands in for a missing one. */
export const RULE_FIELDS = {
  name: t.String({ pattern: RULE_NAME.source, problem: `must be ${RULE_NAME_RULE}` }),
  /** A regular expression; group 1, when there is one, is the value found. */
  pattern: t.String({
    minLength: 1,
    maxLength: RULE_PATTERN_MAX,
    problem: `must be a regular expression of 1 to ${RULE_PATTERN_MAX} characters`,
  }),
  detector: oneOf(DETECTORS, { default: RULE_DEFAULTS.detector, problem: listed(DETECTORS) }),
  severity: oneOf(SEVERITIES, { default: RULE_DEFAULTS.severity, problem: listed(SEVERITIES) }),
  /**
   * The rule's action; "" means: use the detector's action, else the pipeline default_action. On a
   * built-in rule it is the shipped default unless `action_by_user` says the user set it.
   */
  action: oneOf(RULE_ACTIONS, { default: RULE_DEFAULTS.action, problem: listed(RULE_ACTIONS) }),
  enabled: t.Boolean({ default: true, problem: "must be true or false" }),
  /** No default here: a rule file's rules are `community` when shipped, else `custom`. */
  tier: oneOf(RULE_TIERS, { problem: listed(RULE_TIERS) }),
  description: t.String({
    maxLength: RULE_DESCRIPTION_MAX,
    default: "",
    problem: `must be text of at most ${RULE_DESCRIPTION_MAX} characters`,
  }),
  tags: t.Array(t.String({ minLength: 1, maxLength: 64 }), {
    maxItems: 50,
    default: [],
    problem: "must be a list of at most 50 tags of 1 to 64 characters",
  }),
  /** A check the matched value must pass (a checksum, a range, a randomness test). */
  validator: nullable(oneOf(VALIDATORS), { default: null, problem: listed(VALIDATORS) }),
  /** The match only counts when one of these appears near it (case-insensitive). */
  keywords: nullable(words(100, 200), {
    default: null,
    problem: "must be a list of at most 100 words of 1 to 200 characters",
  }),
  /** Minimum Shannon entropy (bits per character) of the matched value. */
  entropy: nullable(t.Number({ exclusiveMinimum: 0, maximum: 8 }), {
    default: null,
    problem: "must be a number of bits per character (0 to 8)",
  }),
  /** Texts in the real format that the rule must find... */
  examples: t.Array(t.String(), { default: [], problem: "must be a list of strings" }),
  /** ...and look-alikes it must not. */
  negative_examples: t.Array(t.String(), { default: [], problem: "must be a list of strings" }),
} as const;

export type RuleFieldName = keyof typeof RULE_FIELDS;
export type RuleFields = { -readonly [K in RuleFieldName]: Static<(typeof RULE_FIELDS)[K]> };

/** The fields a rule file's rule may have: all of them. */
export const RULE_FILE_FIELDS = Object.keys(RULE_FIELDS) as RuleFieldName[];
/** The fields of a YAML `custom_rules` entry (always enabled, tier `custom`). */
export const CUSTOM_RULE_FIELDS = [
  "name",
  "pattern",
  "detector",
  "severity",
  "action",
  "description",
  "tags",
  "validator",
  "keywords",
] as const satisfies readonly RuleFieldName[];
/** The fields a rule created through the dashboard API may set. */
export const API_RULE_FIELDS = [...CUSTOM_RULE_FIELDS, "enabled"] as const satisfies readonly RuleFieldName[];
/** The fields the dashboard API may change on an existing rule (its name stays). */
export const API_EDITABLE_FIELDS = API_RULE_FIELDS.filter((f) => f !== "name") as Exclude<
  (typeof API_RULE_FIELDS)[number],
  "name"
>[];

/** A wrong field (null: the rule as a whole), what it must be, and the value given (if any). */
export type RuleFieldProblem = (field: string | null, problem: string, given?: unknown) => void;

/** `problem (got <value>)`, the value shown short. */
export function withGiven(problem: string, given?: unknown): string {
  if (given === undefined) return problem;
  const shown = JSON.stringify(given) ?? String(given);
  return `${problem} (got ${shown.length > 80 ? `${shown.slice(0, 77)}...` : shown})`;
}

/**
 * Read `fields` of a rule from `raw`, telling every wrong one to `bad`; null when any was wrong (a
 * rule is used whole or not at all). A missing (or null) field takes its default, or is a problem
 * when it has none. `partial`: only the fields given are read, and null is a value like any other
 * (an update that clears `validator`). `strict`: a field outside `fields` is a problem. `trusted`:
 * the values are not checked, only completed with defaults (the shipped rules, which the rule
 * self-test reads checked and compares; this keeps the check off the start-up path).
 */
export function readRuleFields<K extends RuleFieldName>(
  raw: Record<string, unknown>,
  fields: readonly K[],
  bad: RuleFieldProblem,
  opts: {
    partial?: boolean;
    strict?: boolean;
    trusted?: boolean;
    defaults?: Partial<Pick<RuleFields, K>>;
  } = {},
): Pick<RuleFields, K> | null {
  // Loaded on first use, so that reading the shipped rules at start never loads it.
  const check = opts.trusted
    ? () => true
    : (require("@sinclair/typebox/value") as typeof import("@sinclair/typebox/value")).Value.Check;
  const out: Record<string, unknown> = {};
  let ok = true;
  const wrong: RuleFieldProblem = (field, problem, given) => {
    ok = false;
    bad(field, problem, given);
  };
  for (const k of fields) {
    const schema: TSchema & { default?: unknown; problem?: string } = RULE_FIELDS[k];
    const v = raw[k];
    if (v === undefined || (v === null && !opts.partial)) {
      if (opts.partial) continue;
      const d = opts.defaults && k in opts.defaults ? opts.defaults[k] : schema.default;
      if (d === undefined) wrong(k, "is required");
      else out[k] = Array.isArray(d) ? [...d] : d;
    } else if (check(schema, v)) out[k] = v;
    else wrong(k, schema.problem ?? "is invalid", v);
  }
  if (opts.strict)
    for (const k of Object.keys(raw))
      if (!(fields as readonly string[]).includes(k))
        wrong(
          k,
          k in RULE_FIELDS ? "cannot be set here" : `is not a rule field (${fields.join(", ")})`,
          undefined,
        );
  return ok ? (out as Pick<RuleFields, K>) : null;
}
