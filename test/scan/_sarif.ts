/**
 * A focused SARIF 2.1.0 validator (no network, no schema download): the property names each object
 * of the OASIS schema allows (it forbids others), the types and enums we emit, and what GitHub code
 * scanning requires or limits. Returns a list of problems; empty means valid.
 */
const ALLOWED: Record<string, string[]> = {
  sarifLog: ["$schema", "version", "runs", "inlineExternalProperties", "properties"],
  run: [
    "tool",
    "invocations",
    "conversion",
    "language",
    "versionControlProvenance",
    "originalUriBaseIds",
    "artifacts",
    "logicalLocations",
    "graphs",
    "results",
    "automationDetails",
    "runAggregates",
    "baselineGuid",
    "redactionTokens",
    "defaultEncoding",
    "defaultSourceLanguage",
    "newlineSequences",
    "columnKind",
    "externalPropertyFileReferences",
    "threadFlowLocations",
    "taxonomies",
    "addresses",
    "translations",
    "policies",
    "webRequests",
    "webResponses",
    "specialLocations",
    "properties",
  ],
  tool: ["driver", "extensions", "properties"],
  toolComponent: [
    "guid",
    "name",
    "organization",
    "product",
    "productSuite",
    "shortDescription",
    "fullDescription",
    "fullName",
    "version",
    "semanticVersion",
    "dottedQuadFileVersion",
    "releaseDateUtc",
    "downloadUri",
    "informationUri",
    "globalMessageStrings",
    "notifications",
    "rules",
    "taxa",
    "locations",
    "language",
    "contents",
    "isComprehensive",
    "localizedDataSemanticVersion",
    "minimumRequiredLocalizedDataSemanticVersion",
    "associatedComponent",
    "translationMetadata",
    "supportedTaxonomies",
    "properties",
  ],
  reportingDescriptor: [
    "id",
    "deprecatedIds",
    "guid",
    "deprecatedGuids",
    "name",
    "deprecatedNames",
    "shortDescription",
    "fullDescription",
    "messageStrings",
    "defaultConfiguration",
    "helpUri",
    "help",
    "relationships",
    "properties",
  ],
  reportingConfiguration: ["enabled", "level", "rank", "parameters", "properties"],
  multiformatMessageString: ["text", "markdown", "properties"],
  message: ["text", "markdown", "id", "arguments", "properties"],
  result: [
    "ruleId",
    "ruleIndex",
    "rule",
    "kind",
    "level",
    "message",
    "analysisTarget",
    "locations",
    "guid",
    "correlationGuid",
    "occurrenceCount",
    "partialFingerprints",
    "fingerprints",
    "stacks",
    "codeFlows",
    "graphs",
    "graphTraversals",
    "relatedLocations",
    "suppressions",
    "baselineState",
    "rank",
    "attachments",
    "hostedViewerUri",
    "workItemUris",
    "provenance",
    "fixes",
    "taxa",
    "webRequest",
    "webResponse",
    "properties",
  ],
  location: [
    "id",
    "physicalLocation",
    "logicalLocations",
    "message",
    "annotations",
    "relationships",
    "properties",
  ],
  physicalLocation: ["address", "artifactLocation", "region", "contextRegion", "properties"],
  artifactLocation: ["uri", "uriBaseId", "index", "description", "properties"],
  region: [
    "startLine",
    "startColumn",
    "endLine",
    "endColumn",
    "charOffset",
    "charLength",
    "byteOffset",
    "byteLength",
    "snippet",
    "message",
    "sourceLanguage",
    "properties",
  ],
  invocation: [
    "commandLine",
    "arguments",
    "responseFiles",
    "startTimeUtc",
    "endTimeUtc",
    "exitCode",
    "ruleConfigurationOverrides",
    "notificationConfigurationOverrides",
    "toolExecutionNotifications",
    "toolConfigurationNotifications",
    "exitCodeDescription",
    "exitSignalName",
    "exitSignalNumber",
    "processStartFailureMessage",
    "executionSuccessful",
    "machine",
    "account",
    "processId",
    "executableLocation",
    "workingDirectory",
    "environmentVariables",
    "stdin",
    "stdout",
    "stderr",
    "stdoutStderr",
    "properties",
  ],
  notification: [
    "locations",
    "message",
    "level",
    "threadId",
    "timeUtc",
    "exception",
    "descriptor",
    "associatedRule",
    "properties",
  ],
};
const LEVELS = ["none", "note", "warning", "error"];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function validateSarif(log: unknown): string[] {
  const problems: string[] = [];
  const fail = (path: string, msg: string) => problems.push(`${path}: ${msg}`);
  const shape = (v: unknown, kind: string, path: string, required: string[] = []): v is Obj => {
    if (!isObj(v)) {
      fail(path, `expected a ${kind} object`);
      return false;
    }
    for (const k of Object.keys(v))
      if (!ALLOWED[kind]!.includes(k)) fail(path, `property "${k}" is not allowed on ${kind}`);
    for (const k of required) if (v[k] === undefined || v[k] === "") fail(path, `${kind}.${k} is required`);
    if (v.properties !== undefined && !isObj(v.properties))
      fail(path, "properties must be an object (property bag)");
    return true;
  };
  const text = (v: unknown, path: string, max = Number.POSITIVE_INFINITY) => {
    if (!shape(v, "multiformatMessageString", path, ["text"])) return;
    if (typeof v.text !== "string") fail(path, "text must be a string");
    else if (v.text.length > max) fail(path, `text longer than ${max}`);
  };
  const posInt = (v: unknown, path: string, min = 1) => {
    if (!Number.isInteger(v) || (v as number) < min)
      fail(path, `expected an integer >= ${min}, got ${JSON.stringify(v)}`);
  };

  if (!shape(log, "sarifLog", "$", ["$schema", "version", "runs"])) return problems;
  if (log.version !== "2.1.0") fail("$.version", "must be 2.1.0");
  if (typeof log.$schema !== "string" || !/sarif.*2\.1\.0/.test(log.$schema))
    fail("$.$schema", "must name the 2.1.0 schema");
  if (!Array.isArray(log.runs) || log.runs.length === 0)
    return [...problems, "$.runs: must be a non-empty array"];
  if (log.runs.length > 20) fail("$.runs", "GitHub accepts at most 20 runs");
  log.runs.forEach((run: unknown, ri: number) => {
    const rp = `$.runs[${ri}]`;
    if (!shape(run, "run", rp, ["tool", "results"])) return;
    if (
      run.columnKind !== undefined &&
      !["utf16CodeUnits", "unicodeCodePoints"].includes(run.columnKind as string)
    )
      fail(rp, "columnKind invalid");
    if (!shape(run.tool, "tool", `${rp}.tool`, ["driver"])) return;
    const driver = run.tool.driver;
    if (!shape(driver, "toolComponent", `${rp}.tool.driver`, ["name"])) return;
    if (
      driver.semanticVersion !== undefined &&
      !/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/.test(String(driver.semanticVersion))
    )
      fail(`${rp}.tool.driver.semanticVersion`, "not a semantic version");
    const rules = (driver.rules ?? []) as unknown[];
    if (!Array.isArray(rules)) fail(`${rp}.tool.driver.rules`, "must be an array");
    if (rules.length > 25_000) fail(`${rp}.tool.driver.rules`, "GitHub accepts at most 25000 rules");
    const ids = new Set<string>();
    rules.forEach((rule, i) => {
      const p = `${rp}.tool.driver.rules[${i}]`;
      if (!shape(rule, "reportingDescriptor", p, ["id", "shortDescription", "fullDescription", "help"]))
        return;
      if (typeof rule.id !== "string") fail(p, "id must be a string");
      if (ids.has(rule.id as string)) fail(p, `duplicate rule id ${rule.id}`);
      ids.add(rule.id as string);
      if (typeof rule.name === "string" && rule.name.length > 255) fail(p, "name longer than 255");
      text(rule.shortDescription, `${p}.shortDescription`, 1024);
      text(rule.fullDescription, `${p}.fullDescription`, 1024);
      text(rule.help, `${p}.help`);
      if (
        rule.defaultConfiguration !== undefined &&
        shape(rule.defaultConfiguration, "reportingConfiguration", `${p}.defaultConfiguration`)
      ) {
        if (!LEVELS.includes(rule.defaultConfiguration.level as string))
          fail(p, "defaultConfiguration.level invalid");
      }
      const props = (rule.properties ?? {}) as Obj;
      if (
        props.tags !== undefined &&
        (!Array.isArray(props.tags) ||
          props.tags.length > 20 ||
          props.tags.some((t) => typeof t !== "string"))
      )
        fail(p, "properties.tags must be at most 20 strings");
      if (props["security-severity"] !== undefined) {
        const s = Number(props["security-severity"]);
        if (typeof props["security-severity"] !== "string" || !(s > 0 && s <= 10))
          fail(p, "security-severity must be a string score in (0, 10]");
      }
      if (
        props.precision !== undefined &&
        !["very-high", "high", "medium", "low"].includes(props.precision as string)
      )
        fail(p, "precision invalid");
    });
    if (!Array.isArray(run.results)) {
      fail(`${rp}.results`, "must be an array");
      return;
    }
    if (run.results.length > 25_000) fail(`${rp}.results`, "GitHub accepts at most 25000 results per run");
    run.results.forEach((res: unknown, i: number) => {
      const p = `${rp}.results[${i}]`;
      if (!shape(res, "result", p, ["message", "locations", "partialFingerprints"])) return;
      if (res.level !== undefined && !LEVELS.includes(res.level as string)) fail(p, "level invalid");
      if (res.ruleIndex !== undefined) {
        const rule = rules[res.ruleIndex as number] as Obj | undefined;
        if (!rule) fail(p, "ruleIndex out of range");
        else if (res.ruleId !== undefined && rule.id !== res.ruleId)
          fail(p, "ruleId does not match rules[ruleIndex].id");
      } else if (res.ruleId !== undefined && !ids.has(res.ruleId as string))
        fail(p, "ruleId not among driver rules");
      if (shape(res.message, "message", `${p}.message`, ["text"]) && typeof res.message.text !== "string")
        fail(p, "message.text must be a string");
      if (
        !isObj(res.partialFingerprints) ||
        Object.values(res.partialFingerprints).some((v) => typeof v !== "string")
      )
        fail(p, "partialFingerprints must map to strings");
      const locs = res.locations as unknown[];
      if (!Array.isArray(locs) || locs.length === 0 || locs.length > 10) {
        fail(p, "locations: 1 to 10 required");
        return;
      }
      locs.forEach((loc, li) => {
        const lp = `${p}.locations[${li}]`;
        if (!shape(loc, "location", lp, ["physicalLocation"])) return;
        const pl = loc.physicalLocation;
        if (!shape(pl, "physicalLocation", `${lp}.physicalLocation`, ["artifactLocation", "region"])) return;
        if (shape(pl.artifactLocation, "artifactLocation", `${lp}.artifactLocation`, ["uri"])) {
          const uri = pl.artifactLocation.uri as string;
          if (typeof uri !== "string" || uri.includes("\\") || /\s/.test(uri))
            fail(lp, `uri not a valid URI reference: ${uri}`);
          const base = pl.artifactLocation.uriBaseId;
          if (base !== undefined && !isObj((run.originalUriBaseIds as Obj | undefined)?.[base as string]))
            fail(lp, `uriBaseId ${base} is not declared in run.originalUriBaseIds`);
        }
        const rg = pl.region;
        if (!shape(rg, "region", `${lp}.region`, ["startLine", "startColumn", "endLine", "endColumn"]))
          return;
        posInt(rg.startLine, `${lp}.region.startLine`);
        posInt(rg.startColumn, `${lp}.region.startColumn`);
        posInt(rg.endLine, `${lp}.region.endLine`);
        posInt(rg.endColumn, `${lp}.region.endColumn`);
        if ((rg.endLine as number) < (rg.startLine as number)) fail(lp, "endLine before startLine");
        if (rg.endLine === rg.startLine && (rg.endColumn as number) <= (rg.startColumn as number))
          fail(lp, "endColumn must follow startColumn on one line");
      });
    });
    const baseIds = run.originalUriBaseIds;
    if (baseIds !== undefined) {
      if (!isObj(baseIds)) fail(rp, "originalUriBaseIds must be an object");
      else
        for (const [k, v] of Object.entries(baseIds)) {
          if (!shape(v, "artifactLocation", `${rp}.originalUriBaseIds.${k}`)) continue;
          if (typeof v.uri === "string" && !v.uri.endsWith("/"))
            fail(rp, `originalUriBaseIds.${k}.uri must end with "/"`);
        }
    }
    ((run.invocations ?? []) as unknown[]).forEach((inv, i) => {
      const p = `${rp}.invocations[${i}]`;
      if (!shape(inv, "invocation", p, ["executionSuccessful"])) return;
      if (inv.workingDirectory !== undefined)
        shape(inv.workingDirectory, "artifactLocation", `${p}.workingDirectory`);
      ((inv.toolExecutionNotifications ?? []) as unknown[]).forEach((n, k) => {
        const np = `${p}.toolExecutionNotifications[${k}]`;
        if (!shape(n, "notification", np, ["message"])) return;
        shape(n.message, "message", `${np}.message`, ["text"]);
        if (n.level !== undefined && !LEVELS.includes(n.level as string)) fail(np, "level invalid");
      });
    });
  });
  return problems;
}
