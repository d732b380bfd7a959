/** Shared by the provider adapters. */

/** Decide whether the string at `key` of `parent` is opaque data rather than text. */
export type SkipFn = (parent: Record<string, unknown>, key: string, value: string) => boolean;

/** Whether a MIME type is text that should be scanned even when sent as inline data. */
export function isTextMime(mime: unknown): boolean {
  return (
    typeof mime === "string" &&
    /^(text\/|application\/(json|xml|x-yaml|yaml|javascript|x-sh|toml))/i.test(mime)
  );
}
