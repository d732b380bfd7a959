import { describe, expect, test } from "bun:test";
import { maskPathCredentials, sanitizeLine } from "../../src/core/log.ts";

describe("maskPathCredentials", () => {
  test("masks credential query values and leaves the rest of the path byte for byte", () => {
    expect(maskPathCredentials("/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSyA-real")).toBe(
      "/v1beta/models/g:streamGenerateContent?alt=sse&key=****",
    );
    expect(maskPathCredentials("/x?password=p%40ss&a=1&api-key=k&Signature=s#frag")).toBe(
      "/x?password=****&a=1&api-key=****&Signature=****#frag",
    );
    expect(maskPathCredentials("/v1/messages?beta=true")).toBe("/v1/messages?beta=true");
  });
});

describe("sanitizeLine", () => {
  test("masks credentials a log line should never have held", () => {
    const key = ["sk-ant-api03", "Zq8LmN3pR5tV7xY9bC1dF2gH4jK6"].join("-");
    const line = sanitizeLine(`calling with ${key} and postgres://app:hunter22@db/x password=letmein`);
    expect(line).not.toContain("Zq8LmN3pR5");
    expect(line).not.toContain("hunter22");
    expect(line).not.toContain("letmein");
  });
});
