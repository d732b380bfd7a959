/**
 * Preloaded before the test files (bunfig.toml): the run's temp files, removed after the last test.
 * A whole run leaves hundreds of megabytes there (compiled programs, stores, browser profiles), which
 * can take longer to remove than a hook's 5 s on a loaded machine.
 */
import { afterAll } from "bun:test";
import { useRunTempDir } from "./helpers/run-temp.ts";

afterAll(useRunTempDir(), 120_000);
