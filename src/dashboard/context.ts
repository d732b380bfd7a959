/** What every route module receives. */
import type { Runtime } from "../runtime/contract.ts";
import type { Store } from "../store/index.ts";
import type { LiveHub } from "./live.ts";
import type { RuleAnalysis } from "./rule-analysis.ts";
import type { Guard } from "./security.ts";

export interface Ctx {
  rt: Runtime;
  store: Store;
  guard: Guard;
  hub: LiveHub;
  /** The rule analysis run (one per dashboard). */
  analysis: RuleAnalysis;
  /** The dashboard's own port (known after binding). */
  port: () => number;
}
