/**
 * Records of sluice's own types for tests that feed the store, the bus or a hook directly: a
 * session, a finding, a rule and a proxied request with plausible values, each field overridable. Never a real value:
 * previews are masked and hashes made up.
 */
import type { RequestEvent } from "../../src/core/bus.ts";
import { blankSession, type Finding, type RuleDef, type SessionContext } from "../../src/core/types.ts";

export function session(over: Partial<SessionContext> = {}): SessionContext {
  return blankSession({
    session_id: "sess-1",
    client: "claude-cli/2.1.328 (external, sdk-cli)",
    client_name: "claude-code",
    account_id: "acct-1",
    device_id: "dev-1",
    source_ip: "127.0.0.1",
    working_directory: "/home/dev/project",
    git_branch: "main",
    os_platform: "linux",
    api_key_hash: "a".repeat(64),
    model: "claude-sonnet-4-5",
    ...over,
  });
}

let n = 0;
export function finding(over: Partial<Finding> = {}): Finding {
  n++;
  return {
    rule: "aws-access-key",
    detector: "secrets",
    finding_type: "aws_access_key",
    severity: "critical",
    action: "block",
    action_source: "rule_default",
    matched_rules: ["aws-access-key"],
    path: "messages[0].content",
    start: 10,
    end: 30,
    preview: "AKIA****MPLE",
    content_hash: new Bun.CryptoHasher("sha256").update(`value-${n}-${Math.random()}`).digest("hex"),
    value_hash: "b".repeat(64),
    decoded: null,
    description: "AWS access key id",
    ...over,
  };
}

export function rule(over: Partial<RuleDef> = {}): RuleDef {
  return {
    name: "aws-access-key",
    pattern: "AKIA[0-9A-Z]{16}",
    detector: "secrets",
    severity: "critical",
    action: "",
    enabled: true,
    tier: "community",
    source: "builtin",
    description: "AWS access key id",
    tags: ["aws", "cloud"],
    ...over,
  };
}

/** A proxied request as the bus announces it (an Anthropic Messages call that passed), now. */
export function request(over: Partial<RequestEvent> = {}): RequestEvent {
  return {
    request_id: "req-1",
    ts: new Date().toISOString(),
    provider: "anthropic",
    client: "claude-cli/2.1.328",
    model: "claude-sonnet-4-5",
    method: "POST",
    path: "/v1/messages?beta=true",
    action: "pass",
    finding_count: 0,
    rules: null,
    action_source: null,
    bytes: 1234,
    duration_ms: 12.5,
    upstream_status: 200,
    session_id: "sess-1",
    account_id: "acct-1",
    mode: "active",
    error: null,
    login: "api_key",
    unscanned: null,
    ...over,
  };
}
