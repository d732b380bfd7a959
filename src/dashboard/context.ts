/** What every route module receives. */
import type { Runtime } from "../core/runtime.ts";
import type { Store } from "../store/index.ts";
import type { LiveHub } from "./live.ts";
import type { Guard } from "./security.ts";

export interface Ctx {
  rt: Runtime;
  store: Store;
  guard: Guard;
  hub: LiveHub;
  /** The dashboard's own port (known after binding). */
  port: () => number;
}
