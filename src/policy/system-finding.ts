/**
 * Findings sluice records about itself rather than about content: `scan_error` (a payload went out
 * unscanned because scanning failed), `mode_changed` (scanning was switched off) and
 * `extension_block` (a plugin's `pre_request` refused a payload; its action is then `block`),
 * `ambiguous_json` (JSON with a key repeated in one object, blocked unless allowed). Every place
 * that records one builds it here, so they look the same wherever they come from.
 */
import type { Finding, Severity } from "../core/types.ts";

export type SystemFindingType = "scan_error" | "mode_changed" | "extension_block" | "ambiguous_json";

const SEVERITY: Record<SystemFindingType, Severity> = {
  // Something may have left the machine unscanned.
  scan_error: "critical",
  // Nothing is scanned from now on, by someone's choice.
  mode_changed: "warning",
  // A plugin the user configured refused a payload before it was scanned.
  extension_block: "high",
  // A body sluice and its upstream could read differently: what one scanned, the other may not send.
  ambiguous_json: "high",
};

/**
 * A system finding: no value, only what happened, where, and why.
 *
 * Detector `custom`: the finding comes from no shipped detector family (secrets, pii, proprietary,
 * injection), and `custom` is the family of everything that is not one of those; its rule and
 * finding type (`scan_error`, `mode_changed`) tell it apart from user rules. It is never resolved
 * through `detectors.custom.action`: policy did not decide anything.
 *
 * Action `log` (source `system`): what the finding stands for went ahead (the payload was forwarded, the mode was
 * switched) and was recorded, which is what `log` means for any finding. `pass` would say there was
 * nothing to record.
 *
 * `key` makes the finding distinct from others of the same type and place (the store counts repeats
 * of one content_hash in a session as one finding seen again); default the description.
 */
export function systemFinding(
  type: SystemFindingType,
  where: string,
  description: string,
  key: string = description,
): Finding {
  return {
    rule: type,
    detector: "custom",
    finding_type: type,
    severity: SEVERITY[type],
    action: "log",
    action_source: "system",
    matched_rules: [type],
    path: where,
    start: 0,
    end: 0,
    preview: "",
    content_hash: new Bun.CryptoHasher("sha256").update(`${type}\u0000${where}\u0000${key}`).digest("hex"),
    value_hash: null,
    decoded: null,
    description,
  };
}

/** The `scan_error` of a structured scan that failed when the payload's raw text was scanned instead. */
export function rawScanFinding(err: unknown, where: string): Finding {
  const message = err instanceof Error ? err.message : String(err);
  return systemFinding(
    "scan_error",
    where,
    `scanning field by field failed, the raw text was scanned instead: ${message.slice(0, 300)}`,
  );
}

/** The `scan_error` of a fault while scanning what `where` names (never the payload's content). */
export function scanErrorFinding(err: unknown, where: string): Finding {
  const message = err instanceof Error ? err.message : String(err);
  return systemFinding("scan_error", where, `scanning failed, forwarded unscanned: ${message.slice(0, 300)}`);
}

/** Keys longer than this are shown by their start only: a long key can be a token used as a name. */
const SHOWN_KEY = 20;

/** The block of a JSON payload that holds `key` twice in the object at `path`. */
export function ambiguousJsonFinding(key: string, path: string, where: string): Finding {
  const shown =
    key.length <= SHOWN_KEY ? JSON.stringify(key) : `${JSON.stringify(key.slice(0, 4)).slice(0, -1)}…"`;
  return {
    ...systemFinding(
      "ambiguous_json",
      path,
      `the JSON of ${where} holds the key ${shown} twice in one object; sluice and the upstream could each read a different value (proxy.allow_duplicate_keys: true scans every value and forwards it)`,
    ),
    action: "block",
  };
}
