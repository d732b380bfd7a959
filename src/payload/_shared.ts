/** Shared by the provider adapters. */

/**
 * Whether the string at `key` of `parent` is data (inline files and images, `data:` URLs, audio,
 * signatures, encrypted reasoning) rather than text. Such a string is scanned only as the text it
 * decodes to, when it is text (data-text.ts); binary data is not scanned.
 */
export type DataFieldFn = (parent: Record<string, unknown>, key: string, value: string) => boolean;
