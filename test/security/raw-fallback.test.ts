/**
 * Fail-open never means unscanned: when scanning a payload field by field fails (a shape the
 * extractor chokes on, a fault in sluice), its raw text is scanned with the same rules and what that
 * finds is enforced; the `scan_error` still says what failed. Only when the raw scan fails as well
 * does the payload go out unscanned.
 */
import { expect, test } from "bun:test";
import { defaultConfig } from "../../src/config/schema.ts";
import { loadBuiltinRules } from "../../src/detect/builtin.ts";
import { createPipeline, type Payload } from "../../src/policy/pipeline.ts";

const GH = ["ghp_", "R2x0aGVyZVNlY3JldFRva2VuMDAwMDAwMDAw"].join("");

function pipeline() {
  const cfg = defaultConfig();
  return createPipeline({
    config: () => cfg,
    rules: () => loadBuiltinRules(),
    rulesVersion: () => 1,
    hmacKey: null,
  });
}

/** A body whose structured reading throws, as a fault in an extractor would. */
function brokenPayload(raw: () => string): Payload {
  const text = raw;
  return {
    source: "http",
    size: 200,
    scope: null,
    where: "http:/v1/messages",
    segments: () => {
      throw new Error("extractor fault");
    },
    redact: () => {
      throw new Error("not reached");
    },
    raw: text,
  };
}

test("a structured scan that throws: the raw text is scanned and its block enforced, with the scan_error", () => {
  const r = pipeline().inspect(brokenPayload(() => `{"messages":[{"role":"user","content":"token ${GH}"}]}`));
  expect(r.action).toBe("block");
  expect(r.error).toBeUndefined();
  expect(r.findings.map((f) => f.rule)).toEqual(["scan_error", "github_pat"]);
  expect(r.findings[0]!.description).toContain("the raw text was scanned instead: extractor fault");
});

test("a redact decision on the raw text redacts the raw text", () => {
  const cfg = defaultConfig();
  cfg.detectors.secrets.action = "redact";
  const p = createPipeline({
    config: () => cfg,
    rules: () => loadBuiltinRules(),
    rulesVersion: () => 1,
    hmacKey: null,
  });
  const r = p.inspect(brokenPayload(() => `{"content":"token ${GH}"}`));
  expect(r.action).toBe("redact");
  expect(r.redacted).toBeDefined();
  expect(r.redacted).not.toContain(GH);
});

test("when the raw scan fails too, the payload goes out with its scan_error (fail open)", () => {
  const r = pipeline().inspect(
    brokenPayload(() => {
      throw new Error("no raw text either");
    }),
  );
  expect(r.action).toBe("pass");
  expect(r.error).toBe("extractor fault");
  expect(r.findings.map((f) => f.finding_type)).toEqual(["scan_error"]);
});
