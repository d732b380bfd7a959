/**
 * Building blocks for sluice's schemas (TypeBox, the JSON Schema builder the dashboard's Elysia
 * shares): the rule declaration (rule.ts), the store's records and the dashboard's answers.
 */
import { type TLiteral, type TSchema, type TUnion, Type as t } from "@sinclair/typebox";

/** One of a list of strings. */
export const oneOf = <const T extends readonly string[]>(values: T, options: object = {}) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;

/** `s` or null. */
export const nullable = <T extends TSchema>(s: T, options: object = {}) => t.Union([s, t.Null()], options);

/** Text, text or null, a count (a whole number from 0). */
export const text = t.String();
export const maybeText = nullable(t.String());
export const count = t.Integer({ minimum: 0 });

/** An object with exactly these fields (an unknown field is an error where it is checked). */
export const record = <P extends Record<string, TSchema>>(fields: P) =>
  t.Object(fields, { additionalProperties: false });
