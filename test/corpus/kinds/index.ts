/** Every kind of the corpus, by category. */
import type { Kind } from "../contexts.ts";
import { AI } from "./ai.ts";
import { CLOUD } from "./cloud.ts";
import { CONFIG } from "./config.ts";
import { CRYPTO } from "./crypto.ts";
import { DATA } from "./data.ts";
import { DEVOPS } from "./devops.ts";
import { INJECTION } from "./injection.ts";
import { KEYS } from "./keys.ts";
import { MESSAGING } from "./messaging.ts";
import { OBSERVABILITY } from "./observability.ts";
import { OTHER } from "./other.ts";
import { PAYMENTS } from "./payments.ts";
import { PHONES } from "./phones.ts";
import { REGISTRY } from "./registry.ts";
import { SAAS } from "./saas.ts";
import { VCS } from "./vcs.ts";

/** Kinds whose samples come from `documents` replace the table entry of the same rule. */
const custom = new Set(OTHER.filter((k) => k.documents).map((k) => k.rule));

export const KINDS: Kind[] = [
  ...[AI, CLOUD, VCS, REGISTRY, MESSAGING, PAYMENTS, OBSERVABILITY, SAAS, DEVOPS, DATA, CONFIG, CRYPTO, KEYS]
    .flat()
    .filter((k) => !custom.has(k.rule)),
  ...OTHER,
  ...PHONES,
  ...INJECTION,
];
