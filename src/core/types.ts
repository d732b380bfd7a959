/**
 * Shared vocabulary of sluice. Every layer imports these; this file imports nothing but the type of
 * a rule's fields (rule.ts).
 */
import type { RuleFields } from "./rule.ts";

export const SEVERITIES = ["critical", "high", "warning", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const DETECTORS = ["secrets", "pii", "proprietary", "custom", "injection"] as const;
export type DetectorName = (typeof DETECTORS)[number];

/** What a request resolves to, weakest first. */
export const ACTIONS = ["pass", "log", "alert", "redact", "block"] as const;
export type Action = (typeof ACTIONS)[number];
/** The action a rule or detector may carry; "" means "fall through to the next level". */
export const RULE_ACTIONS = ["", "log", "alert", "redact", "block"] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

export const ACTION_RANK: Record<Action, number> = { pass: 0, log: 1, alert: 2, redact: 3, block: 4 };

export function strongest(a: Action, b: Action): Action {
  return ACTION_RANK[a] >= ACTION_RANK[b] ? a : b;
}

/**
 * Where a finding's action came from, strongest first: an action the user set on the rule
 * (`rule`: YAML `custom_rules`, the dashboard API, a rules import), `detectors.<name>.action`
 * (`detector`), the rule's shipped default (`rule_default`), `pipeline.default_action` (`default`).
 * `system`: a finding sluice raises about the traffic or itself (a scan error, an MCP protocol
 * check), whose action is fixed or comes from a setting of its own.
 */
export const ACTION_SOURCES = ["rule", "detector", "rule_default", "default", "system"] as const;
export type ActionSource = (typeof ACTION_SOURCES)[number];

/** Where an action came from, as a person reads it: `detectors.pii.action`, `the rule's default`. */
export function actionSourceLabel(source: ActionSource | "" | undefined, detector: DetectorName): string {
  switch (source) {
    case "rule":
      return "set on the rule";
    case "detector":
      return `detectors.${detector}.action`;
    case "rule_default":
      return "the rule's default";
    case "default":
      return "pipeline.default_action";
    case "system":
      return "sluice";
    default:
      return "unknown";
  }
}

/**
 * The back ends sluice forwards to, each with its own upstream (`providers.<name>.upstream`):
 * the three API-key providers and the two subscription back ends that sign-in modes talk to
 * (`chatgpt`: Codex signed in with ChatGPT; `code_assist`: Gemini CLI signed in with Google).
 * A Claude subscription (OAuth) talks to `anthropic` like an API key does.
 */
export const PROVIDERS = ["anthropic", "openai", "gemini", "chatgpt", "code_assist"] as const;
export type Provider = (typeof PROVIDERS)[number];
/** A provider, or "unknown" for a request no provider claims (as stored, filtered and counted). */
export const PROVIDER_LABELS = [...PROVIDERS, "unknown"] as const;
export type ProviderLabel = (typeof PROVIDER_LABELS)[number];

/**
 * How a client signed in, as its request shows it: an API key, a Claude subscription's OAuth token
 * (`oauth`), another bearer token (`auth_token`, e.g. a gateway's), a ChatGPT sign-in (`chatgpt`), a
 * Google sign-in (`google`), or no credential at all (`none`).
 */
export const LOGINS = ["api_key", "oauth", "auth_token", "chatgpt", "google", "none"] as const;
export type Login = (typeof LOGINS)[number];

/**
 * Why sluice could not read traffic of a client, counted per client so that it is never silent:
 * `non_json` (a body that is not JSON), `encoded` (a body that does not decode in its
 * content coding, or one in a coding or charset sluice cannot read, forwarded because
 * `proxy.allow_unknown_encoding` is set; its bytes are scanned as text),
 * `unknown_shape` (JSON, but not the conversation shape of its endpoint), `unknown_provider`
 * (answered 400, not forwarded), `too_large` (a compressed body that decodes past
 * `proxy.max_body_size`, in passthrough mode; in active mode it is refused with 413),
 * `bypass` (the back end told the client to send its conversation elsewhere, around sluice).
 */
export const UNSCANNED_REASONS = [
  "non_json",
  "encoded",
  "unknown_shape",
  "unknown_provider",
  "too_large",
  "bypass",
] as const;
export type UnscannedReason = (typeof UNSCANNED_REASONS)[number];

export const VALIDATORS = [
  "luhn",
  "ssn_range",
  "iban_mod97",
  "exclude_private_ips",
  "basic_auth",
  "login_pair",
  "bip39_checksum",
  "base58check_wif",
  "base58check_xprv",
  "secp256k1_key",
  "random_secret",
  "phone_number",
  "email_address",
] as const;
export type ValidatorName = (typeof VALIDATORS)[number];

/** Who is talking: derived from headers and body by the proxy; stored with each finding and session. */
export interface SessionContext {
  session_id: string;
  client: string;
  client_name: string;
  account_id: string | null;
  device_id: string | null;
  source_ip: string | null;
  working_directory: string | null;
  git_branch: string | null;
  os_platform: string | null;
  api_key_hash: string | null;
  model: string | null;
}

/**
 * A session of which only `known` is known: no client request to derive it from (system events,
 * `sluice mcp`, a failed derivation). Strings not given are empty, everything else null.
 */
export function blankSession(known: Partial<SessionContext> = {}): SessionContext {
  return {
    session_id: "",
    client: "",
    client_name: "",
    account_id: null,
    device_id: null,
    source_ip: null,
    working_directory: null,
    git_branch: null,
    os_platform: null,
    api_key_hash: null,
    model: null,
    ...known,
  };
}

/** A piece of text to scan, with where it came from (a JSON path such as `messages[3].content[0].text`). */
export interface Segment {
  path: string;
  text: string;
}

/**
 * A finding as it leaves the payload pipeline for the rest of sluice: never the raw value.
 * `start`/`end` are offsets into the segment's text (UTF-16 code units).
 */
export interface Finding {
  rule: string;
  detector: DetectorName;
  finding_type: string;
  severity: Severity;
  /** The action policy resolved for this finding (the deciding rule's). */
  action: Action;
  /** Where `action` came from (see ACTION_SOURCES). */
  action_source: ActionSource;
  /**
   * Every rule that matched this place (overlapping matches in one segment), the deciding rule
   * (`rule`) first: the strongest action decides, then the higher severity.
   */
  matched_rules: string[];
  path: string;
  start: number;
  end: number;
  /** Masked preview, e.g. `AKIA****MPLE`. */
  preview: string;
  /** sha256 hex of the matched value (dedup key). */
  content_hash: string;
  /** HMAC-SHA-256 hex of the matched value with the installation key; null when analytics.hash_secrets is false. */
  value_hash: string | null;
  /** Set when the value was found inside decoded content (e.g. "base64", "base64>url"). */
  decoded: string | null;
  description: string;
}

/** What a finding is and what was done with it, wherever it is shown: stored, scanned, live, reported. */
export type FindingVerdict = Pick<
  Finding,
  | "rule"
  | "detector"
  | "finding_type"
  | "severity"
  | "action"
  | "action_source"
  | "matched_rules"
  | "preview"
  | "description"
  | "decoded"
>;

/**
 * A finding's verdict fields, copied: none is cut from a larger string (the preview is built by
 * masking, the description is the rule's, `decoded` names encodings), so a copy keeps no text alive.
 */
export function findingVerdict(f: FindingVerdict): FindingVerdict {
  return {
    rule: f.rule,
    detector: f.detector,
    finding_type: f.finding_type,
    severity: f.severity,
    action: f.action,
    action_source: f.action_source,
    matched_rules: f.matched_rules,
    preview: f.preview,
    description: f.description,
    decoded: f.decoded,
  };
}

export const RULE_TIERS = ["community", "pro", "custom"] as const;
export type RuleTier = (typeof RULE_TIERS)[number];
/** Where a rule comes from: rules/ (`builtin`), YAML `custom_rules`, the dashboard API, `sluice rules import`. */
export const RULE_SOURCES = ["builtin", "config", "dashboard", "import"] as const;
export type RuleSource = (typeof RULE_SOURCES)[number];

/** A rule's name: what every place that takes one (rule files, custom_rules, the API) accepts. */
export const RULE_NAME = /^[a-z0-9][a-z0-9_.-]{0,99}$/;
export const RULE_NAME_RULE = "lowercase letters, digits, '_', '.', '-' (1 to 100 characters)";
/** The longest pattern and description a rule may have. */
export const RULE_PATTERN_MAX = 4096;
export const RULE_DESCRIPTION_MAX = 1000;
/** What a rule's detector, severity and action are when it leaves them out (rule.ts declares them so). */
export const RULE_DEFAULTS = { detector: "custom", severity: "high", action: "" } as const satisfies {
  detector: DetectorName;
  severity: Severity;
  action: RuleAction;
};

/** The fields a rule may leave out when it is built in code (they are null or empty then). */
type OptionalRuleField = "validator" | "keywords" | "entropy" | "examples" | "negative_examples";

/**
 * A detection rule as data (rules/*.yaml, the rule store, custom_rules, the API): the fields declared
 * in rule.ts, where it came from, and on a built-in rule whether the user set its action.
 */
export type RuleDef = Omit<RuleFields, OptionalRuleField> &
  Partial<Pick<RuleFields, OptionalRuleField>> & {
    /** Where the rule comes from (see RULE_SOURCES). */
    source: RuleSource;
    /**
     * Set when the user chose `action` (the dashboard API, a rules import) on a built-in rule: it then
     * beats `detectors.<name>.action`. The action of any other rule (custom_rules, dashboard, import)
     * is the user's by definition.
     */
    action_by_user?: boolean;
    hit_count?: number;
  };
