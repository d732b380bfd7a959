/** Preloaded before the test files (bunfig.toml): the run's temp files, removed after the last test. */
import { afterAll } from "bun:test";
import { useRunTempDir } from "./helpers/run-temp.ts";

afterAll(useRunTempDir());
